"""The restart protocol through its API seam (get + patch), in milliseconds: 409 loops, lost
answers, another run's record, a new revision landing, a paused Deployment; and the record, which
names the revision by its template and the content of its sources, never by generation or
resourceVersion. The same paths run end to end on kubesim in tests/e2e/test_multi_e2e.py."""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from verify import errors
from verify.flow.restart import (
    RESTART_CONFLICTS,
    RESTART_RECORD,
    RESTART_RECORD_AT,
    Record,
    Restarter,
    Revision,
    Sources,
    recognised,
    record_of,
    sources_digest,
)
from verify.model import WorkloadRef

SECRET_VALUE = "hunter2"
SOURCES: Sources = {
    ("configmap", "web-config"): {
        "metadata": {"uid": "uid-1", "resourceVersion": "41"},
        "data": {"app.conf": "level=3"},
    },
    ("secret", "web-secrets"): {
        "metadata": {"uid": "uid-2", "resourceVersion": "7", "labels": {"team": "a"}},
        "data": {"PASSWORD": base64.b64encode(SECRET_VALUE.encode()).decode()},
    },
    ("configmap", "optional-extra"): None,
}
INSPECTED = Revision(name="7c9f5d8b6", number=3)
PATH = "/apis/apps/v1/namespaces/shop/deployments/web"
THEN = "2026-12-03T10:00:00+00:00"


def record(*, restarted: str = "7c9f5d8b6", nxt: int = 4, writer: str = "old", sources: Sources = SOURCES) -> str:
    salt = b"0123456789abcdef"
    return Record(restarted, nxt, salt.hex(), sources_digest(sources, salt=salt), writer).text()


def deployment(
    *, generation: int = 3, record: str = "", paused: bool = False, stamp: str = ""
) -> dict[str, Any]:
    annotations = {RESTART_RECORD: record, RESTART_RECORD_AT: THEN} if record else {}
    template: dict[str, Any] = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
    if stamp:
        template["metadata"]["annotations"] = {"kubectl.kubernetes.io/restartedAt": stamp}
    return {
        "metadata": {
            "name": "web",
            "generation": generation,
            "resourceVersion": "100",
            "annotations": annotations,
        },
        "spec": {"paused": paused, "replicas": 2, "template": template},
    }


class FakeApi:
    """Answers each patch with the next scripted outcome (an exception to raise, or None), and each
    get with `stored(patches)`; records every call."""

    def __init__(
        self, outcomes: list[Exception | None], stored: Callable[[list[Any]], dict[str, Any]]
    ) -> None:
        self.outcomes = list(outcomes)
        self.stored = stored
        self.patches: list[Any] = []
        self.gets = 0

    def get(self, path: str, **params: Any) -> Any:
        assert path == PATH
        self.gets += 1
        return self.stored(self.patches)

    def patch(self, path: str, body: Any, content_type: str) -> Any:
        assert path == PATH and content_type == "application/strategic-merge-patch+json"
        self.patches.append(copy.deepcopy(body))
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if outcome is not None:
            raise outcome
        return {}


def restarter(api: FakeApi, lines: list[str]) -> Restarter:
    return Restarter(
        api=api,
        ref=WorkloadRef(kind="deployment", name="web"),
        namespace="shop",
        label="deployment web",
        log=lines.append,
        writer="run1",
        clock=lambda: "2026-12-03T12:00:00+00:00",
    )


def test_a_restart_is_one_patch_carrying_the_record_and_the_resource_version() -> None:
    api, lines = FakeApi([None], lambda p: deployment()), []
    r = restarter(api, lines)
    r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and api.gets == 0
    body = api.patches[0]
    assert body["metadata"]["resourceVersion"] == "100"
    assert body["metadata"]["annotations"][RESTART_RECORD_AT] == "2026-12-03T12:00:00+00:00"
    written = record_of(body)
    # the revision restarted, the history number its restart creates, the content, the writer
    assert written is not None
    assert (written.restarted, written.next, written.writer) == ("7c9f5d8b6", 4, "run1")
    assert written.digest == sources_digest(SOURCES, salt=bytes.fromhex(written.salt))
    assert body["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/restartedAt": "2026-12-03T12:00:00+00:00"
    }
    assert (r.count, r.at_attempt, r.sent, r.used) == (1, 1, True, True)
    assert lines == ["deployment web: restarted (once), waiting for the new rollout"]


def test_the_record_offers_no_cheap_test_of_a_secret_value() -> None:
    text = record()
    plain = base64.b64encode(SECRET_VALUE.encode()).decode()
    for form in (SECRET_VALUE, plain, hashlib.sha256(SECRET_VALUE.encode()).hexdigest()[:12]):
        assert form not in text
    # salted: the same content under two salts shares no digest
    assert sources_digest(SOURCES, salt=b"a" * 16) != sources_digest(SOURCES, salt=b"b" * 16)


def test_the_sources_digest_follows_content_not_metadata() -> None:
    salt = b"s" * 16
    digest = sources_digest(SOURCES, salt=salt)
    touched = copy.deepcopy(dict(SOURCES))
    secret = touched[("secret", "web-secrets")]
    assert secret is not None
    secret["metadata"].update(resourceVersion="8", labels={"team": "b"}, annotations={"synced": "now"})
    assert sources_digest(touched, salt=salt) == digest  # a label, an annotation, a resourceVersion
    for change in (
        lambda o: o["data"].update(PASSWORD=base64.b64encode(b"hunter3").decode()),
        lambda o: o.update(binaryData={"k": "AA=="}),
        lambda o: o.update(immutable=True),
        lambda o: o["metadata"].update(uid="uid-recreated"),
    ):
        changed = copy.deepcopy(dict(SOURCES))
        obj = changed[("secret", "web-secrets")]
        assert obj is not None
        change(obj)
        assert sources_digest(changed, salt=salt) != digest
    created = {**SOURCES, ("configmap", "optional-extra"): {"metadata": {"uid": "u9"}, "data": {}}}
    assert sources_digest(created, salt=salt) != digest  # an optional source that appeared


@pytest.mark.parametrize(
    ("current", "stored", "sources", "expected"),
    [
        # the revision the restart made: the next number, stamped by that restart
        (Revision("5d8f9c7b4", 4, THEN), deployment(generation=9), SOURCES, True),
        # the revision that was restarted (a concurrent run, or a rollback to it)
        (INSPECTED, deployment(), SOURCES, True),
        # a deploy after the restart keeps its stamp but is the next number again: a new revision
        (Revision("0a1b2c3d4", 5, THEN), deployment(), SOURCES, False),
        # someone's own `kubectl rollout restart` made revision 4 instead: another stamp
        (Revision("5d8f9c7b4", 4, "2026-12-03T11:00:00+00:00"), deployment(), SOURCES, False),
        # the Secret's content changed: the same template, a new revision
        (
            Revision("5d8f9c7b4", 4, THEN),
            deployment(),
            {**SOURCES, ("secret", "web-secrets"): {"metadata": {"uid": "uid-2"}, "data": {"PASSWORD": "eQ=="}}},
            False,
        ),
    ],
)
def test_the_record_recognises_the_revision_by_template_and_content(
    current: Revision, stored: dict[str, Any], sources: Sources, expected: bool
) -> None:
    stored["metadata"]["annotations"] = {RESTART_RECORD: record(), RESTART_RECORD_AT: THEN}
    assert recognised(stored, revision=current, sources=sources) is expected


def test_a_record_this_version_cannot_read_is_no_record() -> None:
    for text in ("g4-0123456789abcdef.run1", "revision=x;next=y;sources=scrypt:zz:aa;by=w", ""):
        assert record_of(deployment(record=text)) is None


def test_a_lost_answer_met_again_as_a_conflict_counts_as_this_runs_restart() -> None:
    def stored(patches: list[Any]) -> dict[str, Any]:
        # the first patch was applied (a webhook changed the template too); its answer was lost
        obj = deployment(record=patches[0]["metadata"]["annotations"][RESTART_RECORD])
        obj["spec"]["template"]["metadata"]["labels"]["stamped-by"] = "webhook"
        return obj

    api, lines = FakeApi([errors.Conflict("the object has been modified")], stored), []
    r = restarter(api, lines)
    r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=2)
    assert len(api.patches) == 1 and api.gets == 1
    assert (r.count, r.at_attempt, r.prior) == (1, 2, "")


def test_another_runs_record_for_the_same_revision_stops_a_second_restart() -> None:
    # the other run's patch landed first, for the revision this run inspected too
    theirs = record(writer="other")
    api, lines = FakeApi([errors.Conflict("modified")], lambda p: deployment(generation=4, record=theirs)), []
    r = restarter(api, lines)
    r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and r.count == 0
    assert r.prior == THEN and r.used
    assert "another run of rollout-verify restarted it meanwhile" in lines[-1]


def test_a_new_revision_landing_during_inspection_keeps_the_restart_for_it() -> None:
    deployed = deployment(generation=5)
    deployed["spec"]["template"]["spec"]["containers"] = [{"name": "app", "image": "web:2"}]
    api, lines = FakeApi([errors.Conflict("modified")], lambda p: deployed), []
    r = restarter(api, lines)
    r.restart(deployment(generation=3), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and r.count == 0
    assert not r.sent and not r.used
    assert "changed to a new revision while it was inspected" in lines[-1]


def test_a_scale_during_inspection_is_the_same_revision_and_the_restart_goes_on() -> None:
    # an HPA moved replicas (and the generation): the template is the inspected one
    scaled = deployment(generation=4)
    scaled["spec"]["replicas"] = 5
    scaled["metadata"]["resourceVersion"] = "101"
    api, lines = FakeApi([errors.Conflict("modified"), None], lambda p: scaled), []
    r = restarter(api, lines)
    r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert len(api.patches) == 2 and r.count == 1
    assert api.patches[1]["metadata"]["resourceVersion"] == "101"
    assert api.patches[0]["metadata"]["annotations"][RESTART_RECORD] == (
        api.patches[1]["metadata"]["annotations"][RESTART_RECORD]
    )


def test_conflicts_that_never_end_restart_nothing() -> None:
    api, lines = FakeApi([errors.Conflict("modified")] * RESTART_CONFLICTS, lambda p: deployment()), []
    r = restarter(api, lines)
    with pytest.raises(errors.RestartConflicted, match=f"{RESTART_CONFLICTS} conflicts"):
        r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert len(api.patches) == RESTART_CONFLICTS and r.count == 0


@pytest.mark.parametrize(
    "failure",
    [
        errors.Unavailable("gave up"),
        errors.DeadlineExceeded("--timeout ran out"),
        errors.Unreachable("no route"),
    ],
)
def test_an_unanswered_patch_is_counted_as_sent(failure: errors.ApiError) -> None:
    api = FakeApi([failure], lambda p: deployment())
    r = restarter(api, [])
    with pytest.raises(type(failure)):
        r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert r.count == 1 and r.sent


def test_a_refused_patch_is_not_counted() -> None:
    api = FakeApi([errors.Forbidden('User "ci" cannot patch resource "deployments"')], lambda p: deployment())
    r = restarter(api, [])
    with pytest.raises(errors.Forbidden):
        r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert r.count == 0


def test_a_paused_deployment_is_never_patched() -> None:
    api = FakeApi([], lambda p: deployment())
    r = restarter(api, [])
    with pytest.raises(errors.WorkloadPaused, match="can't restart paused deployment"):
        r.restart(deployment(paused=True), revision=INSPECTED, sources=SOURCES, attempts=1)
    assert api.patches == [] and not r.sent


def test_a_second_restart_in_one_run_is_refused() -> None:
    api = FakeApi([None], lambda p: deployment())
    r = restarter(api, [])
    r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=1)
    with pytest.raises(RuntimeError):
        r.restart(deployment(), revision=INSPECTED, sources=SOURCES, attempts=2)
    assert len(api.patches) == 1


def test_an_earlier_runs_record_is_noticed_before_a_restart_and_only_read_when_there_is_one() -> None:
    lines: list[str] = []
    asked: list[Revision] = []

    def current(revision: Revision) -> Callable[[], Revision]:
        return lambda: asked.append(revision) or revision

    r = restarter(FakeApi([], lambda p: deployment()), lines)
    r.note_earlier(deployment(), revision=current(INSPECTED), sources=SOURCES)
    assert not r.used and asked == []  # no record: the revision is not even looked up
    made = Revision("5d8f9c7b4", 4, THEN)
    changed = {**SOURCES, ("configmap", "web-config"): {"metadata": {"uid": "uid-1"}, "data": {"app.conf": "4"}}}
    r.note_earlier(deployment(record=record()), revision=current(made), sources=changed)
    assert not r.used  # the config changed since: a new revision, a new restart
    r.note_earlier(deployment(generation=7, record=record()), revision=current(made), sources=SOURCES)
    assert r.used and r.prior == THEN  # scaled since (generation 7): still the revision it made
    # the revision its restart made is said to be that, not to have been restarted
    assert lines[-1].endswith(f"this revision is an earlier run's restart ({THEN}); it will not be restarted again")
    before = restarter(FakeApi([], lambda p: deployment()), lines)
    before.note_earlier(deployment(record=record()), revision=current(INSPECTED), sources=SOURCES)
    assert before.used and lines[-1].endswith(
        f"an earlier run of rollout-verify already restarted this revision ({THEN}); it will not be restarted again"
    )  # the revision it restarted (the restart's rollout has not replaced it yet)


def test_a_webhook_stamping_the_template_does_not_hide_the_record() -> None:
    # the revision is recognised by its history number and restart stamp, so whatever a webhook
    # added to the template in the same write, a later run on that revision finds the record
    stored = deployment(generation=4, record=record(writer="run1"), stamp=THEN)
    stored["spec"]["template"]["metadata"]["annotations"]["policy.example/stamped"] = "yes"
    r = restarter(FakeApi([], lambda p: stored), [])
    r.note_earlier(stored, revision=lambda: Revision("9e8d7c6b5", 4, THEN), sources=SOURCES)
    assert r.used
