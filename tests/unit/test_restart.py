"""The restart protocol through its API seam (get + patch), in milliseconds: 409 loops, lost
answers, another run's record, a new revision landing, a paused Deployment. The same paths run
end to end on kubesim in tests/test_multi_e2e.py."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from verify import errors
from verify.flow.restart import RESTART_CONFLICTS, RESTART_RECORD, RESTART_RECORD_AT, Restarter, restart_key
from verify.model import WorkloadRef

SOURCES = [("configmap", "web-config", "uid-1", "41")]
PATH = "/apis/apps/v1/namespaces/shop/deployments/web"


def deployment(*, generation: int = 3, record: str = "", paused: bool = False) -> dict[str, Any]:
    annotations = {RESTART_RECORD: record, RESTART_RECORD_AT: "2026-12-03T10:00:00+00:00"} if record else {}
    return {
        "metadata": {
            "name": "web",
            "generation": generation,
            "resourceVersion": "100",
            "annotations": annotations,
        },
        "spec": {
            "paused": paused,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        },
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
    r.restart(deployment(), sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and api.gets == 0
    body = api.patches[0]
    assert body["metadata"]["resourceVersion"] == "100"
    key, writer = body["metadata"]["annotations"][RESTART_RECORD].split(".")
    # the revision the API server will store: the inspected generation + 1, and the sources read
    assert writer == "run1" and key == restart_key(generation=4, sources=SOURCES)
    assert body["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/restartedAt": "2026-12-03T12:00:00+00:00"
    }
    assert (r.count, r.at_attempt, r.sent, r.used) == (1, 1, True, True)
    assert lines == ["deployment web: restarted (once), waiting for the new rollout"]


def test_a_lost_answer_met_again_as_a_conflict_counts_as_this_runs_restart() -> None:
    def stored(patches: list[Any]) -> dict[str, Any]:
        # the first patch was applied (a webhook changed the template too); its answer was lost
        obj = deployment(record=patches[0]["metadata"]["annotations"][RESTART_RECORD])
        obj["spec"]["template"]["metadata"]["labels"]["stamped-by"] = "webhook"
        return obj

    api, lines = FakeApi([errors.Conflict("the object has been modified")], stored), []
    r = restarter(api, lines)
    r.restart(deployment(), sources=SOURCES, attempts=2)
    assert len(api.patches) == 1 and api.gets == 1
    assert (r.count, r.at_attempt, r.prior) == (1, 2, "")


def test_another_runs_record_for_the_same_revision_stops_a_second_restart() -> None:
    # the other run's patch landed first: the stored generation is the one its record names
    theirs = f"{restart_key(generation=4, sources=SOURCES)}.other"
    api, lines = FakeApi([errors.Conflict("modified")], lambda p: deployment(generation=4, record=theirs)), []
    r = restarter(api, lines)
    r.restart(deployment(), sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and r.count == 0
    assert r.prior == "2026-12-03T10:00:00+00:00" and r.used
    assert "another run of rollout-verify restarted it meanwhile" in lines[-1]


def test_a_new_revision_landing_during_inspection_keeps_the_restart_for_it() -> None:
    api, lines = FakeApi([errors.Conflict("modified")], lambda p: deployment(generation=5)), []
    r = restarter(api, lines)
    r.restart(deployment(generation=3), sources=SOURCES, attempts=1)
    assert len(api.patches) == 1 and r.count == 0
    assert not r.sent and not r.used
    assert "changed to a new revision while it was inspected" in lines[-1]


def test_conflicts_that_never_end_restart_nothing() -> None:
    api, lines = FakeApi([errors.Conflict("modified")] * RESTART_CONFLICTS, lambda p: deployment()), []
    r = restarter(api, lines)
    with pytest.raises(errors.RestartConflicted, match=f"{RESTART_CONFLICTS} conflicts"):
        r.restart(deployment(), sources=SOURCES, attempts=1)
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
        r.restart(deployment(), sources=SOURCES, attempts=1)
    assert r.count == 1 and r.sent


def test_a_refused_patch_is_not_counted() -> None:
    api = FakeApi([errors.Forbidden('User "ci" cannot patch resource "deployments"')], lambda p: deployment())
    r = restarter(api, [])
    with pytest.raises(errors.Forbidden):
        r.restart(deployment(), sources=SOURCES, attempts=1)
    assert r.count == 0


def test_a_paused_deployment_is_never_patched() -> None:
    api = FakeApi([], lambda p: deployment())
    r = restarter(api, [])
    with pytest.raises(errors.WorkloadPaused, match="can't restart paused deployment"):
        r.restart(deployment(paused=True), sources=SOURCES, attempts=1)
    assert api.patches == [] and not r.sent


def test_a_second_restart_in_one_run_is_refused() -> None:
    api = FakeApi([None], lambda p: deployment())
    r = restarter(api, [])
    r.restart(deployment(), sources=SOURCES, attempts=1)
    with pytest.raises(RuntimeError):
        r.restart(deployment(), sources=SOURCES, attempts=2)
    assert len(api.patches) == 1


def test_an_earlier_runs_record_is_noticed_before_a_restart() -> None:
    record = f"{restart_key(generation=3, sources=SOURCES)}.old"
    lines: list[str] = []
    r = restarter(FakeApi([], lambda p: deployment()), lines)
    r.note_earlier(deployment(record=record), sources=[("configmap", "web-config", "uid-1", "42")])
    assert not r.used  # the config changed since: a new revision, a new restart
    r.note_earlier(deployment(generation=4, record=record), sources=SOURCES)
    assert not r.used  # a deploy landed since (generation 4): a new revision, a new restart
    r.note_earlier(deployment(record=record), sources=SOURCES)
    assert r.used and r.prior == "2026-12-03T10:00:00+00:00"
    assert "already restarted this revision" in lines[-1]


def test_a_webhook_stamping_the_template_does_not_hide_the_record() -> None:
    # the record names the stored generation, so whatever the webhook added to the template in
    # the same write, a later run on that revision finds it
    record = f"{restart_key(generation=4, sources=SOURCES)}.run1"
    stored = deployment(generation=4, record=record)
    stored["spec"]["template"]["metadata"]["annotations"] = {"policy.example/stamped": "yes"}
    r = restarter(FakeApi([], lambda p: stored), [])
    r.note_earlier(stored, sources=SOURCES)
    assert r.used
