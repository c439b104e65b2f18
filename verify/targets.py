"""What a run verifies: workloads named as KIND/NAME, the way kubectl names them.

Pure: parsing and the API paths of each kind, so the runner and the config file agree on
what `sts/db` or `daemonset/agent` means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["deployment", "statefulset", "daemonset"]

# every spelling kubectl accepts for the three kinds
_ALIASES: dict[str, Kind] = {
    "deployment": "deployment",
    "deployments": "deployment",
    "deploy": "deployment",
    "deployment.apps": "deployment",
    "deployments.apps": "deployment",
    "statefulset": "statefulset",
    "statefulsets": "statefulset",
    "sts": "statefulset",
    "statefulset.apps": "statefulset",
    "statefulsets.apps": "statefulset",
    "daemonset": "daemonset",
    "daemonsets": "daemonset",
    "ds": "daemonset",
    "daemonset.apps": "daemonset",
    "daemonsets.apps": "daemonset",
}
KINDS: tuple[Kind, ...] = ("deployment", "statefulset", "daemonset")
PLURAL: dict[Kind, str] = {
    "deployment": "deployments",
    "statefulset": "statefulsets",
    "daemonset": "daemonsets",
}
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_TARGET_HINT = "use KIND/NAME with KIND deployment, statefulset or daemonset (or deploy, sts, ds)"


@dataclass(frozen=True)
class WorkloadRef:
    """One workload; `namespace` None means the run's namespace."""

    kind: Kind
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


def valid_name(name: str) -> bool:
    """Workload names are DNS-1123 subdomains, as the API server requires."""
    return len(name) <= 253 and bool(_DNS1123_SUBDOMAIN.match(name))


def parse_kind(text: str) -> Kind:
    kind = _ALIASES.get(text.strip().lower())
    if kind is None:
        raise ValueError(f'"{text}" is not a workload kind; {_TARGET_HINT}')
    return kind


def parse_target(text: str) -> WorkloadRef:
    """`deployment/web`, `sts/db`, `daemonset.apps/agent` (kubectl's spellings)."""
    raw = text.strip()
    kind_text, slash, name = raw.partition("/")
    if not slash or not kind_text or not name:
        raise ValueError(f'"{raw}" is not KIND/NAME; {_TARGET_HINT}')
    kind = parse_kind(kind_text)
    if not valid_name(name):
        raise ValueError(
            f'"{raw}" has an invalid {kind} name "{name}"; use lowercase letters, digits, '
            "'-' and '.' (DNS-1123 subdomain)"
        )
    return WorkloadRef(kind=kind, name=name)


def api_path(*, kind: Kind, namespace: str, name: str = "") -> str:
    """The apps/v1 collection (or object) path of a kind."""
    base = f"/apis/apps/v1/namespaces/{namespace}/{PLURAL[kind]}"
    return f"{base}/{name}" if name else base
