"""The run's inputs as plain data: the workloads named and the expectations as the user wrote them
(no I/O, no client objects, no secret values). What a run resolves, observes and judges is in
`verify.findings`; this half is all that start-up (the settings' checks) needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["deployment", "statefulset", "daemonset", "rollout"]

FileSource = Literal["sha256", "configmap", "secret"]


@dataclass(frozen=True)
class WorkloadRef:
    """One workload named for verification (a target); `namespace` None means the run's."""

    kind: Kind
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class FileSpec:
    """One `--expect-file PATH=SPEC` as the user wrote it (SPEC not yet resolved)."""

    path: str
    source: FileSource
    # sha256: the hex digest; configmap/secret: the object name and key.
    digest: str = ""
    name: str = ""
    key: str = ""


@dataclass(frozen=True)
class HttpExpectation:
    """One `--expect-http PORT/PATH[=STATUS]`: what each pod must answer through the pod proxy.

    With `field`, the body must be JSON whose value at that dotted path equals `equals` (JSON
    text) or, before resolution, the live value of the ConfigMap key `equals_configmap`.
    """

    port: int
    path: str  # starts with "/", may carry a query string
    status: int = 200
    field: str = ""
    equals: str = ""
    equals_configmap: str = ""  # NAME/KEY
    origin: str = ""  # where `equals` came from, e.g. "configmap web-config/version"

    @property
    def label(self) -> str:
        return f"{self.port}{self.path}"
