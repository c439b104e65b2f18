"""Cells the printers share (kubernetes/kubernetes pkg/printers/internalversion/printers.go and
apimachinery's duration and label formatting): ages, container names and images, selectors."""

from __future__ import annotations

import datetime as dt
from typing import Any

Obj = dict[str, Any]


def human_age(ts: str | None) -> str:
    """kubectl's `duration.HumanDuration` (short form)."""
    if not ts:
        return "<unknown>"
    t = dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    return human_duration(int((dt.datetime.now(dt.UTC) - t).total_seconds()))


def human_duration(s: int) -> str:
    if s < 0:
        s = 0
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if d < 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    return f"{d}d"


def containers(tpl: Obj) -> tuple[str, str]:
    cs = (tpl.get("spec") or {}).get("containers") or []
    return ",".join(c["name"] for c in cs), ",".join(c.get("image", "") for c in cs)


def sorted_labels(m: dict[str, str] | None) -> str:
    """`labels.FormatLabels`."""
    return ",".join(f"{k}={v}" for k, v in sorted((m or {}).items())) or "<none>"


def label_selector(spec: Obj) -> str:
    """`metav1.FormatLabelSelector`: requirements sorted by key."""
    sel = spec.get("selector") or {}
    parts = [(k, f"{k}={v}") for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        key, op, vals = e.get("key", ""), e.get("operator", ""), sorted(e.get("values") or [])
        text = {
            "In": f"{key} in ({','.join(vals)})",
            "NotIn": f"{key} notin ({','.join(vals)})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op, key)
        parts.append((key, text))
    return ",".join(t for _, t in sorted(parts)) or "<none>"
