"""Waiting for a rollout with a watch (no polling), judged by `rollout_status.workload_state`,
which is `kubectl rollout status` for Deployments, StatefulSets and DaemonSets; a dropped watch
resumes from the last version seen, a 410 re-reads the object, a 5xx ERROR event backs off."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from verify import errors
from verify.errors import RolloutNotComplete
from verify.flow.rollout_status import workload_state
from verify.kube import objects, retry
from verify.kube.api import Api, status_message
from verify.kube.kinds import api_path
from verify.model import Kind


class _Stall:
    """When to say that the rollout is still not done (retry.Cadence: after 10 s without change,
    then every 30 s); nothing while it moves."""

    def __init__(self, report: Callable[[dict[str, Any]], None] | None) -> None:
        self.report = report
        self.seen = ""
        self.cadence = retry.Cadence()

    def note(self, message: str) -> None:
        if message != self.seen:
            self.seen = message
            self.cadence.restart()

    def check(self, obj: dict[str, Any]) -> None:
        if self.report is not None and self.cadence.due():
            self.report(obj)

    def seconds_left(self) -> float:
        return max(1.0, self.cadence.seconds_left()) if self.report is not None else math.inf


class _Looks:
    """When to look at a waiting rollout's pods (`on_look`, every `every` seconds): the watch is
    asked to end by then, so a rollout that never changes is still looked at."""

    def __init__(self, look: Callable[[dict[str, Any]], None] | None, every: float) -> None:
        self.look, self.every = look, every
        self.cadence = retry.Cadence(first=every, every=every)

    def check(self, obj: dict[str, Any]) -> None:
        if self.look is not None and self.cadence.due():
            self.look(obj)

    def seconds_left(self) -> float:
        return max(1.0, self.cadence.seconds_left()) if self.look is not None else math.inf


def wait_for_rollout(
    *,
    api: Api,
    namespace: str,
    name: str,
    kind: Kind = "deployment",
    on_stall: Callable[[dict[str, Any]], None] | None = None,
    on_look: Callable[[dict[str, Any]], None] | None = None,
    look_every: float = 5.0,
) -> dict[str, Any]:
    """Return the workload once kubectl would call it rolled out; raise RolloutNotComplete.
    `on_stall` is given the workload when it has not changed for 10 s, then every 30 s (the
    watch is then asked to end by then, so a silent stall is still seen). `on_look` is given it
    every `look_every` seconds while it is not done, and may raise to end the wait (--fail-fast)."""

    stall = _Stall(on_stall)
    looks = _Looks(on_look, look_every)

    def state_of(obj: dict[str, Any]) -> Any:
        state = workload_state(kind=kind, obj=obj)
        stall.note(state.message)
        return state

    path = api_path(kind=kind, namespace=namespace, name=name)
    dep: dict[str, Any] = api.get(path)
    pause = retry.Backoff(deadline=api.deadline)
    while True:
        state = state_of(dep)
        if state.done:
            return dep
        if state.failed:
            raise RolloutNotComplete(state.message, dep)
        remaining = api.deadline.remaining()
        if remaining <= 0:
            raise RolloutNotComplete(f"timed out waiting for the rollout: {state.message}", dep)
        if objects.paused(dep):
            # a paused Deployment never progresses: waiting out the timeout would only hide that
            raise RolloutNotComplete(f"{kind} {name} is paused: {state.message}", dep)
        stall.check(dep)
        looks.check(dep)
        rv = objects.resource_version(dep)
        try:
            with api.watch(
                api_path(kind=kind, namespace=namespace),
                fieldSelector=f"metadata.name={name}",
                resourceVersion=rv,
                allowWatchBookmarks="true",
                timeoutSeconds=str(
                    max(
                        1,
                        int(
                            min(
                                remaining + 1, 300, math.ceil(min(stall.seconds_left(), looks.seconds_left()))
                            )
                        ),
                    )
                ),
            ) as events:
                for ev in events:
                    obj = ev.get("object") or {}
                    typ = ev.get("type")
                    if typ == "ERROR":
                        if obj.get("code") == 410:  # too old: start again from a fresh GET
                            break
                        code = int(obj.get("code") or 0)
                        msg = status_message(json.dumps(obj), "watch failed")[0]
                        if retry.retryable(code, msg):
                            # etcd's leader change or timeout sent as an event (500, 504):
                            # resumed, as kubectl's RetryWatcher does
                            raise retry.Transient(f"watch failed: {msg} (HTTP {code})")
                        raise errors.api_error(status=code, message=msg)
                    pause.reset()
                    if typ == "DELETED":
                        raise errors.WorkloadDeleted(f"{kind} {name} was deleted during the rollout")
                    if typ == "BOOKMARK":
                        dep["metadata"]["resourceVersion"] = objects.resource_version(obj) or rv
                        continue
                    if typ in ("ADDED", "MODIFIED"):
                        dep = obj
                        s = state_of(dep)
                        if s.done or s.failed:
                            break
                    if api.deadline.expired:
                        break
                    stall.check(dep)
                    looks.check(dep)
                else:
                    continue  # stream ended (timeoutSeconds): resume from the last version seen
        except retry.Transient as e:
            pause.sleep(e)
        except errors.Expired:  # an expired version as an HTTP status: re-read, as for the event
            pass
        state = state_of(dep)
        if not state.done and not state.failed:
            if api.deadline.expired:
                raise RolloutNotComplete(f"timed out waiting for the rollout: {state.message}", dep)
            dep = api.get(path)
