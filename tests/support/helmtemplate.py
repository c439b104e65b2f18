"""`helm template` for the small subset of Go templates examples/helm uses, so its tests run
where helm is not installed (when it is, they use the real one): `{{ .Values.a.b }}`,
`{{ .Release.Name }}`, `{{ .Release.Namespace }}`, `{{ .Chart.Name }}`, `{{ toJson X }}`,
`{{ X | quote }}`, `{{ if X }}...{{ else }}...{{ end }}` (nested too), a raw string
(``{{`{{args.x}}`}}``, how a chart writes Argo's own placeholders) and the `{{-`/`-}}` whitespace trims.
Anything else raises, so a template using more fails loudly instead of rendering wrongly."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

HELM = shutil.which("helm")
_ACTION = re.compile(r"\{\{(-?)\s*(`[^`]*`|.*?)\s*(-?)\}\}", re.S)


class Unsupported(Exception):
    """The template uses something this renderer does not implement."""


def render(chart: Path, *, release: str, namespace: str, values: dict[str, Any] | None = None) -> str:
    """The chart's manifests (test hooks included) as `helm template --namespace NS RELEASE chart`."""
    merged = _merge(yaml.safe_load((chart / "values.yaml").read_text()) or {}, values or {})
    if HELM:
        vals = chart.parent / f".{release}-values.json"
        vals.write_text(json.dumps(merged))
        try:
            return subprocess.run(
                [HELM, "template", release, str(chart), "--namespace", namespace, "-f", str(vals)],
                capture_output=True, text=True, check=True, timeout=60,
            ).stdout  # fmt: skip
        finally:
            vals.unlink()
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    scope = {
        "Values": merged,
        "Release": {"Name": release, "Namespace": namespace},
        "Chart": {"Name": meta["name"]},
    }
    docs = []
    for path in sorted((chart / "templates").rglob("*.yaml")):
        docs.append(
            f"---\n# Source: {meta['name']}/{path.relative_to(chart)}\n{_render(path.read_text(), scope)}"
        )
    return "\n".join(docs)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _render(text: str, scope: dict[str, Any]) -> str:
    out: list[str] = []
    # one entry per open `if`: (whether its branch is taken now, whether the enclosing text is shown)
    stack: list[tuple[bool, bool]] = []
    pos = 0

    def shown() -> bool:
        return all(taken for taken, _ in stack)

    for m in _ACTION.finditer(text):
        literal = text[pos : m.start()]
        if m.group(1):
            literal = literal.rstrip(" \t\n")
        if shown():
            out.append(literal)
        pos = m.end()
        if m.group(3):
            while pos < len(text) and text[pos] in " \t\n":
                pos += 1
        action = m.group(2)
        if action.startswith("if "):
            outer = shown()
            stack.append((outer and bool(_value(action[3:].strip(), scope)), outer))
        elif action == "else":
            taken, outer = stack.pop()
            stack.append((outer and not taken, outer))
        elif action == "end":
            stack.pop()
        elif shown():
            out.append(_expression(action, scope))
    if stack:
        raise Unsupported("an `if` without its `end`")
    out.append(text[pos:])
    return "".join(out)


def _expression(action: str, scope: dict[str, Any]) -> str:
    if len(action) >= 2 and action[0] == action[-1] == "`":
        return action[1:-1]  # a raw string literal, printed as it is
    parts = [p.strip() for p in action.split("|")]
    head = parts[0]
    if head.startswith("toJson "):
        value: Any = json.dumps(_value(head[len("toJson ") :].strip(), scope), separators=(",", ":"))
    else:
        value = _value(head, scope)
    for fn in parts[1:]:
        if fn != "quote":
            raise Unsupported(f"function {fn!r}")
        value = json.dumps(str(value))
    return str(value)


def _value(ref: str, scope: dict[str, Any]) -> Any:
    if not ref.startswith("."):
        raise Unsupported(f"expression {ref!r}")
    cur: Any = scope
    for key in ref[1:].split("."):
        cur = cur.get(key) if isinstance(cur, dict) else None
    return cur
