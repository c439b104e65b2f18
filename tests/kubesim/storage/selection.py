"""Label and field selectors: parsing `labelSelector`/`fieldSelector` strings and LabelSelector
objects, and matching objects against them."""

from __future__ import annotations

from typing import Any


def parse_label_selector(sel: str) -> list[tuple[str, str, list[str]]]:
    """`a=b,c!=d,e in (x,y),!f,g` → (key, op, values)."""
    out: list[tuple[str, str, list[str]]] = []
    sel = sel.strip()
    if not sel:
        return out
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for raw in parts:
        p = raw.strip()
        if " notin " in p or " in " in p:
            op = "notin" if " notin " in p else "in"
            key, _, rest = p.partition(f" {op} ")
            vals = [v.strip() for v in rest.strip().strip("()").split(",") if v.strip()]
            out.append((key.strip(), op, vals))
        elif "!=" in p:
            k, _, v = p.partition("!=")
            out.append((k.strip(), "!=", [v.strip()]))
        elif "==" in p:
            k, _, v = p.partition("==")
            out.append((k.strip(), "=", [v.strip()]))
        elif "=" in p:
            k, _, v = p.partition("=")
            out.append((k.strip(), "=", [v.strip()]))
        elif p.startswith("!"):
            out.append((p[1:].strip(), "!", []))
        else:
            out.append((p, "exists", []))
    return out


def labels_match(labels: dict[str, str], reqs: list[tuple[str, str, list[str]]]) -> bool:
    for key, op, vals in reqs:
        have = key in labels
        v = labels.get(key)
        if (
            (op == "=" and v != vals[0])
            or (op == "!=" and v == vals[0])
            or (op == "in" and v not in vals)
            or (op == "notin" and have and v in vals)
            or (op == "exists" and not have)
            or (op == "!" and have)
        ):
            return False
    return True


def selector_from_match(match: dict[str, Any] | None) -> list[tuple[str, str, list[str]]]:
    """A LabelSelector object (`matchLabels`, `matchExpressions`) as requirements."""
    match = match or {}
    reqs: list[tuple[str, str, list[str]]] = [
        (k, "=", [v]) for k, v in (match.get("matchLabels") or {}).items()
    ]
    for e in match.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}[e["operator"]]
        reqs.append((e["key"], op, list(e.get("values") or [])))
    return reqs


def _field_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    return "" if cur is None else str(cur)


def parse_field_selector(sel: str) -> list[tuple[str, str, str]]:
    out = []
    for raw in (sel or "").split(","):
        p = raw.strip()
        if not p:
            continue
        if "!=" in p:
            k, _, v = p.partition("!=")
            out.append((k.strip(), "!=", v.strip()))
        else:
            k, _, v = p.partition("==" if "==" in p else "=")
            out.append((k.strip(), "=", v.strip()))
    return out


def fields_match(obj: dict[str, Any], reqs: list[tuple[str, str, str]]) -> bool:
    for key, op, val in reqs:
        have = _field_value(obj, key)
        if (op == "=") != (have == val):
            return False
    return True
