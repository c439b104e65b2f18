"""The one write: `kubectl rollout restart`'s patch, sent at most once per revision and recorded
on the workload so that a retried job or a concurrent run does not restart the same revision again.

A revision is what the pods are made from: the pod template, named as the controllers name it
(Deployment: the ReplicaSet's `pod-template-hash`; StatefulSet: `updateRevision`; DaemonSet: the
ControllerRevision's name, each numbered in the workload's history), and the content of the
ConfigMaps/Secrets it reads. Never the generation (an HPA scaling the workload moves it) nor a
resourceVersion (a label or annotation on a Secret moves it). An Argo Rollout is restarted as
`kubectl argo rollouts restart` does (a merge patch of `spec.restartAt`: its pods are evicted, its
revision stays), so its record names the revision that goes on running.

The record names the revision that was restarted, the history number the restart creates (the
patch carries the workload's resourceVersion, so it lands on exactly the inspected template, and
every controller numbers the next template one past the current one, whatever a mutating webhook
adds to it in the same write) and a salted, deliberately slow digest of the sources' content: it
says whether they changed without offering a cheap guess of a Secret's value. The revision the
restart made is recognised by that number and by the `restartedAt` stamp the same patch put in
its template. The record ends in the writing run's id, so a patch that took effect but whose
answer was lost is recognised as our own. It is read before every patch, including after a new
revision landed while the old one was inspected; it is never printed."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from verify import errors
from verify.flow import argo_rollout
from verify.kube import objects
from verify.kube.kinds import api_path
from verify.kube.names import RESTARTED_AT
from verify.model import WorkloadRef

# written on the workload with the restart: which revision (template + the content of the
# ConfigMaps/Secrets it read) rollout-verify restarted, so a retried CI job does not restart it again
RESTART_RECORD = "rollout-verify.io/restarted-for"
RESTART_RECORD_AT = "rollout-verify.io/restarted-at"
RESTART_CONFLICTS = 5  # a workload's resourceVersion moves with every status write

# (kind, name) -> the object as read (None: not found), for every source the verification read
Sources = Mapping[tuple[str, str], Mapping[str, Any] | None]
# scrypt (RFC 7914) at the cost OpenSSL's limits allow: ~40 ms and 16 MiB a guess
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 16}


class WorkloadApi(Protocol):
    """The two calls the restart makes: the seam its unit tests drive."""

    def get(self, path: str, **params: Any) -> Any: ...

    def patch(self, path: str, body: Any, content_type: str) -> Any: ...


@dataclass(frozen=True)
class Revision:
    """What the inspected pods were made from."""

    name: str  # pod-template-hash (Deployment), the ControllerRevision's name (StatefulSet, DaemonSet)
    number: int  # its number in the workload's history (`kubectl rollout history`)
    stamp: str = ""  # the template's kubectl.kubernetes.io/restartedAt, if any


def revision_of(*, workload: Mapping[str, Any], name: str, number: int) -> Revision:
    """The revision a selection found, with the restart stamp of the workload's template."""
    stamp = objects.strings(objects.template(workload), "metadata", "annotations").get(RESTARTED_AT, "")
    return Revision(name=name, number=number, stamp=stamp)


def _content(kind: str, obj: Mapping[str, Any] | None) -> Any:
    """What a new container reads of a source: its data, immutability and identity. Labels,
    annotations and the resourceVersion are not content."""
    if obj is None:
        return None
    if kind == "secretproviderclass":
        return {"uid": objects.uid(obj), "spec": objects.mapping(obj, "spec")}
    return {
        "uid": objects.uid(obj),
        "immutable": obj.get("immutable") is True,
        "data": objects.mapping(obj, "data"),
        "binaryData": objects.mapping(obj, "binaryData"),
    }


def sources_digest(sources: Sources, *, salt: bytes) -> str:
    """A salted scrypt digest of every source's content together: equal exactly when nothing a
    new container reads changed, and never a cheap test of a guessed Secret value."""
    canonical = json.dumps(
        [[kind, name, _content(kind, obj)] for (kind, name), obj in sorted(sources.items())],
        sort_keys=True,
        separators=(",", ":"),
    ).encode()
    return hashlib.scrypt(canonical, salt=salt, **_SCRYPT).hex()


@dataclass(frozen=True)
class Record:
    """The restart record: the revision restarted, the history number the restart created, the
    sources' salted digest, and the run that wrote it."""

    restarted: str
    next: int
    salt: str
    digest: str
    writer: str

    def text(self) -> str:
        return (
            f"revision={self.restarted};next={self.next};"
            f"sources=scrypt:{self.salt}:{self.digest};by={self.writer}"
        )


def record_of(obj: Mapping[str, Any]) -> Record | None:
    """The workload's restart record, None when there is none (or one this version cannot read)."""
    raw = objects.annotations_of(obj).get(RESTART_RECORD, "")
    fields = dict(part.partition("=")[::2] for part in raw.split(";"))
    algorithm, _, rest = fields.get("sources", "").partition(":")
    salt, _, digest = rest.partition(":")
    number = fields.get("next", "")
    if not (fields.get("revision") and number.isdigit() and algorithm == "scrypt" and salt and digest):
        return None
    try:
        bytes.fromhex(salt)
    except ValueError:
        return None
    return Record(fields["revision"], int(number), salt, digest, fields.get("by", ""))


def recognised(obj: Mapping[str, Any], *, revision: Revision, sources: Sources) -> bool:
    """Does the workload's record cover this revision: the one it restarted, or the one its
    restart made (the next history number, stamped by that restart), with the same content?"""
    record = record_of(obj)
    if record is None or not revision.name:
        return False
    at = objects.annotations_of(obj).get(RESTART_RECORD_AT, "")
    made = revision.number == record.next and bool(at) and revision.stamp == at
    if record.restarted != revision.name and not made:
        return False
    digest = sources_digest(sources, salt=bytes.fromhex(record.salt))
    return hmac.compare_digest(digest, record.digest)


def _now() -> str:
    return dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")


@dataclass
class Restarter:
    """One workload's restart budget: `sent` is checked before any patch; `count` counts the patches
    the API server accepted (or may have); `prior` is when an earlier run's restart covered this revision."""

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

    def note_earlier(
        self, obj: Mapping[str, Any], *, revision: Callable[[], Revision], sources: Sources
    ) -> None:
        """Did an earlier (or a concurrent) run already restart this revision? Asked after every
        failed attempt, so a revision that landed meanwhile is judged by its own record
        (`revision` is asked for only when the workload has one)."""
        if self.sent or self.prior or record_of(obj) is None:
            return
        current = revision()
        if not recognised(obj, revision=current, sources=sources):
            return
        self.prior = objects.annotations_of(obj).get(RESTART_RECORD_AT, "") or "an earlier run"
        # said exactly: the revision that run restarted, or the one its restart made
        record = record_of(obj)
        said = (
            "an earlier run of rollout-verify already restarted this revision"
            if record is not None and record.restarted == current.name
            else "this revision is an earlier run's restart"
        )
        self.log(f"{self.label}: {said} ({self.prior}); it will not be restarted again")

    def restart(self, obj: Mapping[str, Any], *, revision: Revision, sources: Sources, attempts: int) -> None:
        """Send the restart, or find that it need not (or must not) be sent; refuses a second call."""
        if self.sent:
            raise RuntimeError("a restart was already issued in this run")
        ref = self.ref
        if ref.kind != "rollout" and objects.paused(obj):
            raise errors.WorkloadPaused(
                f"deployments.apps/{ref.name} can't restart paused deployment (run rollout resume first)"
            )
        if self.dry_run:
            self.would = f"would restart {ref.kind} {ref.name} once (--dry-run: nothing was sent)"
            self.log(f"{self.label}: {self.would}")
            return
        self.sent = True
        path = api_path(kind=ref.kind, namespace=self.namespace, name=ref.name)
        inspected = objects.template(obj)
        salt = secrets.token_bytes(16)
        record = Record(
            restarted=revision.name,
            next=revision.number + 1,
            salt=salt.hex(),
            digest=sources_digest(sources, salt=salt),
            writer=self.writer,
        ).text()

        def counted() -> None:
            self.count += 1
            self.at_attempt = attempts

        for _ in range(RESTART_CONFLICTS):
            now = self.clock()
            annotations = {RESTART_RECORD: record, RESTART_RECORD_AT: now}
            body, content_type = _restart_patch(ref.kind, obj, annotations, now)
            try:
                self.api.patch(path, body, content_type)
            except errors.Unanswered:
                counted()  # it may have been applied before the server failed to answer
                raise
            except errors.Conflict:
                obj = self.api.get(path)
                theirs = record_of(obj)
                if theirs is not None and theirs.writer == self.writer:
                    # our own patch, applied, whose answer was lost; the retry met its own change.
                    # Asked first: a deploy may have landed right after it, and this run's restart
                    # was sent all the same
                    counted()
                    self.log(f"{self.label}: restarted (once), waiting for the new rollout")
                    return
                if recognised(obj, revision=revision, sources=sources):
                    self.prior = objects.annotations_of(obj).get(RESTART_RECORD_AT, "") or "another run"
                    self.log(
                        f"{self.label}: another run of rollout-verify restarted it meanwhile "
                        f"({self.prior}); it will not be restarted again"
                    )
                    return
                if objects.template(obj) != inspected:
                    # a new deploy landed while the old revision was inspected (a scale or a label
                    # moves the generation, not the template): restarting would act
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


def _restart_patch(kind: str, obj: Mapping[str, Any], record: dict[str, str], now: str) -> tuple[Any, str]:
    """`kubectl rollout restart`'s strategic-merge patch of the template, or for a Rollout
    `kubectl argo rollouts restart`'s merge patch of spec.restartAt (its pods are evicted, the
    revision stays); each with the record and the inspected resourceVersion."""
    version = objects.resource_version(obj)
    if kind == "rollout":
        # `restart --in 1s`: restartAt counts in seconds and a pod created in its second counts as
        # restarted (rollout/restart.go), so the next second also covers pods just inspected
        at = dt.datetime.fromisoformat(now).astimezone(dt.UTC).replace(microsecond=0) + dt.timedelta(
            seconds=1
        )
        body = argo_rollout.restart_body(
            now=at.strftime("%Y-%m-%dT%H:%M:%SZ"), resource_version=version, record=record
        )
        return body, "application/merge-patch+json"
    body = {
        "metadata": {"resourceVersion": version, "annotations": record},
        "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}},
    }
    return body, "application/strategic-merge-patch+json"
