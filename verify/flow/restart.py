"""The one write: `kubectl rollout restart`'s patch, sent at most once per revision and recorded
on the workload so that a retried job or a concurrent run does not restart the same revision again.

The record is `KEY.WRITER`. KEY names the revision as the API server stores it, not as this client
predicts it: `g<generation>` (the generation the restart produces: the patch carries the
workload's resourceVersion, so it lands on exactly the inspected generation and bumps it by one,
whatever a mutating admission webhook adds to the template in the same write) and a digest of the
ConfigMaps/Secrets the verification read. WRITER names this run, so a patch that took effect but
whose answer was lost is recognised as our own. The record is read before every patch, including
after a new revision landed while the old one was inspected."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from verify import errors
from verify.kube import objects
from verify.kube.kinds import api_path
from verify.kube.names import RESTARTED_AT
from verify.model import WorkloadRef

# written on the workload with the restart: which revision (template + the ConfigMaps/Secrets
# it read) rollout-verify restarted, so a retried CI job does not restart the same one again
RESTART_RECORD = "rollout-verify.io/restarted-for"
RESTART_RECORD_AT = "rollout-verify.io/restarted-at"
RESTART_CONFLICTS = 5  # a workload's resourceVersion moves with every status write

Sources = Iterable[tuple[str, str, str, str]]  # (kind, name, uid, resourceVersion)


class WorkloadApi(Protocol):
    """The two calls the restart makes: the seam its unit tests drive."""

    def get(self, path: str, **params: Any) -> Any: ...

    def patch(self, path: str, body: Any, content_type: str) -> Any: ...


def restart_key(*, generation: int, sources: Sources) -> str:
    """The revision a restart produced: the workload's generation after the restart, and the
    (kind, name, uid, resourceVersion) of every ConfigMap/Secret the verification read: a new
    deploy or new config is a new key."""
    digest = hashlib.sha256(json.dumps(sorted(sources)).encode()).hexdigest()[:16]
    return f"g{generation}-{digest}"


def record_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    """The restart record `KEY.WRITER`: the restarted revision's key and the run that wrote it."""
    key, _, writer = objects.annotations_of(obj).get(RESTART_RECORD, "").partition(".")
    return key, writer


def restarted_for(obj: Mapping[str, Any], *, sources: Sources) -> bool:
    """Does the workload's restart record name its current (stored) revision and sources?"""
    key = record_of(obj)[0]
    return bool(key) and key == restart_key(generation=objects.generation(obj), sources=sources)


def _now() -> str:
    return dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")


@dataclass
class Restarter:
    """One workload's restart budget: `sent` is checked before any patch; `count` counts the patches
    the API server accepted (or may have); `prior` is when an earlier run restarted this revision."""

    api: WorkloadApi
    ref: WorkloadRef
    namespace: str
    label: str
    log: Callable[[str], None]
    writer: str = field(default_factory=lambda: secrets.token_hex(4))
    clock: Callable[[], str] = _now
    dry_run: bool = False  # judge as usual, send nothing: `would` says what would have been sent
    would: str = ""
    sent: bool = False
    count: int = 0
    at_attempt: int = -1  # how many attempts preceded the (possible) restart
    prior: str = ""

    @property
    def used(self) -> bool:
        """Whether this revision's one restart is spent (by this run or an earlier one)."""
        return self.sent or bool(self.prior)

    def note_earlier(self, obj: Mapping[str, Any], *, sources: Sources) -> None:
        """Did an earlier (or a concurrent) run already restart this revision? Asked after every
        attempt, so a revision that landed meanwhile is judged by its own record."""
        if self.sent or self.prior or not restarted_for(obj, sources=sources):
            return
        self.prior = objects.annotations_of(obj).get(RESTART_RECORD_AT, "") or "an earlier run"
        self.log(
            f"{self.label}: an earlier run of rollout-verify already restarted this revision "
            f"({self.prior}); it will not be restarted again"
        )

    def restart(self, obj: Mapping[str, Any], *, sources: Sources, attempts: int) -> None:
        """Send the restart, or find that it need not (or must not) be sent; refuses a second call."""
        if self.sent:
            raise RuntimeError("a restart was already issued in this run")
        ref = self.ref
        if objects.paused(obj):
            raise errors.WorkloadPaused(
                f"deployments.apps/{ref.name} can't restart paused deployment (run rollout resume first)"
            )
        if self.dry_run:
            self.would = f"would restart {ref.kind} {ref.name} once (--dry-run: nothing was sent)"
            self.log(f"{self.label}: {self.would}")
            return
        self.sent = True
        sources = list(sources)
        path = api_path(kind=ref.kind, namespace=self.namespace, name=ref.name)
        inspected_generation = objects.mapping(obj, "metadata").get("generation")

        def counted() -> None:
            self.count += 1
            self.at_attempt = attempts

        for _ in range(RESTART_CONFLICTS):
            now = self.clock()
            # the template changes, so the stored generation moves on by exactly one
            key = restart_key(generation=objects.generation(obj) + 1, sources=sources)
            body = {
                "metadata": {
                    "resourceVersion": objects.resource_version(obj),
                    "annotations": {RESTART_RECORD: f"{key}.{self.writer}", RESTART_RECORD_AT: now},
                },
                "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}},
            }
            try:
                self.api.patch(path, body, "application/strategic-merge-patch+json")
            except errors.Unanswered:
                counted()  # it may have been applied before the server failed to answer
                raise
            except errors.Conflict:
                obj = self.api.get(path)
                if record_of(obj)[1] == self.writer:
                    # our own patch, applied, whose answer was lost; the retry met its own change.
                    # Asked first: a deploy may have landed right after it, and this run's restart
                    # was sent all the same
                    counted()
                    self.log(f"{self.label}: restarted (once), waiting for the new rollout")
                    return
                if restarted_for(obj, sources=sources):
                    self.prior = objects.annotations_of(obj).get(RESTART_RECORD_AT, "") or "another run"
                    self.log(
                        f"{self.label}: another run of rollout-verify restarted it meanwhile "
                        f"({self.prior}); it will not be restarted again"
                    )
                    return
                if objects.mapping(obj, "metadata").get("generation") != inspected_generation:
                    # a new deploy landed while the old revision was inspected: restarting would act
                    # on a verdict about pods that are going away; nothing was sent, so the one
                    # restart stays available for the new revision
                    self.sent = False
                    self.log(
                        f"{self.label}: changed to a new revision while it was inspected; "
                        "inspecting that one instead of restarting"
                    )
                    return
                continue
            counted()
            self.log(f"{self.label}: restarted (once), waiting for the new rollout")
            return
        raise errors.RestartConflicted(
            f"{ref.kind} {ref.name} kept changing while the restart was sent "
            f"({RESTART_CONFLICTS} conflicts); not restarted"
        )
