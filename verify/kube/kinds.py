"""The three workload kinds: every spelling kubectl accepts, their plural names and API paths."""

from __future__ import annotations

from verify.model import Kind

KINDS: tuple[Kind, ...] = ("deployment", "statefulset", "daemonset")
PLURAL: dict[Kind, str] = {
    "deployment": "deployments",
    "statefulset": "statefulsets",
    "daemonset": "daemonsets",
}
# the `kind` the API writes (an event's involvedObject.kind)
TITLE: dict[Kind, str] = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}
_SHORT: dict[Kind, str] = {"deployment": "deploy", "statefulset": "sts", "daemonset": "ds"}
# deployment, deployments, deploy, deployment.apps, deployments.apps, and so on
ALIASES: dict[str, Kind] = {
    spelling: kind
    for kind in KINDS
    for word in (kind, PLURAL[kind])
    for spelling in (word, f"{word}.apps")
} | {short: kind for kind, short in _SHORT.items()}


def kind_of(text: str) -> Kind | None:
    """The kind a kubectl spelling names (`sts`, `Deployments.apps`), or None."""
    return ALIASES.get(text.strip().lower())


def api_path(*, kind: Kind, namespace: str, name: str = "") -> str:
    """The apps/v1 collection (or object) path of a kind."""
    base = f"/apis/apps/v1/namespaces/{namespace}/{PLURAL[kind]}"
    return f"{base}/{name}" if name else base
