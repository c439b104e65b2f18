"""The workload kinds: every spelling kubectl accepts, their plural names, API groups and paths.
Argo Rollouts' Rollout (argoproj.io/v1alpha1) is one of them when its CRDs are installed."""

from __future__ import annotations

from verify.model import Kind

KINDS: tuple[Kind, ...] = ("deployment", "statefulset", "daemonset", "rollout")
PLURAL: dict[Kind, str] = {
    "deployment": "deployments",
    "statefulset": "statefulsets",
    "daemonset": "daemonsets",
    "rollout": "rollouts",
}
# the `kind` the API writes (an event's involvedObject.kind)
TITLE: dict[Kind, str] = {
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "daemonset": "DaemonSet",
    "rollout": "Rollout",
}
GROUP: dict[Kind, str] = {
    "deployment": "apps",
    "statefulset": "apps",
    "daemonset": "apps",
    "rollout": "argoproj.io",
}
_VERSION: dict[Kind, str] = {"rollout": "v1alpha1"}
_SHORT: dict[Kind, str] = {"deployment": "deploy", "statefulset": "sts", "daemonset": "ds", "rollout": "ro"}
# deployment, deployments, deploy, deployment.apps, deployments.apps, rollout.argoproj.io, and so on
ALIASES: dict[str, Kind] = {
    spelling: kind
    for kind in KINDS
    for word in (kind, PLURAL[kind])
    for spelling in (word, f"{word}.{GROUP[kind]}")
} | {short: kind for kind, short in _SHORT.items()}


def kind_of(text: str) -> Kind | None:
    """The kind a kubectl spelling names (`sts`, `Deployments.apps`, `ro`), or None."""
    return ALIASES.get(text.strip().lower())


def api_path(*, kind: Kind, namespace: str, name: str = "") -> str:
    """The collection (or object) path of a kind: apps/v1, or argoproj.io/v1alpha1 for Rollouts."""
    base = f"/apis/{GROUP[kind]}/{_VERSION.get(kind, 'v1')}/namespaces/{namespace}/{PLURAL[kind]}"
    return f"{base}/{name}" if name else base
