"""The Job controller (kubernetes/kubernetes pkg/controller/job/job_controller.go, NonIndexed
completion mode): keeps min(parallelism, completions - succeeded) pods running, replaces a
failed pod after the controller's exponential back-off (10 s doubling, Knobs.job_backoff),
and finishes the Job:
- succeeded pods reach `completions` (or, with completions unset, any pod succeeded and none is
  left active): SuccessCriteriaMet, then Complete, both `CompletionsReached` "Reached expected
  number of succeeded pods", and completionTime;
- failed pods exceed `backoffLimit` (restartPolicy Never), or the restarts of the active pods
  reach it (OnFailure, `pastBackoffLimitOnFailure`): FailureTarget, the active pods deleted,
  then Failed, both `BackoffLimitExceeded` "Job has reached the specified backoff limit";
- `activeDeadlineSeconds` passed: the same with `DeadlineExceeded` "Job was active longer than
  specified deadline".
Its events are the real controller's: SuccessfulCreate / FailedCreate (podcontrol.py; the pods
are named from `generateName`), SuccessfulDelete, Completed "Job completed", and the Warning
with the failure's reason and message.
Pods are counted from what the store holds (the real controller's finalizer-based tracking of
pods that are already gone is not emulated)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING

from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj, now_rfc3339
from .podcontrol import PodControl
from .podutil import controller_ref, is_ready, owned_by, parse_time, phase, terminating

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
JOBS = BY_PATH[("batch", "jobs")]
MAX_BACKOFF = 600.0  # MaxJobPodFailureBackOff
COMPLETED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")


def finished(job: Obj) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def _condition(job: Obj, ctype: str) -> Obj | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return None


def _new_condition(ctype: str, why: tuple[str, str], now: str) -> Obj:
    return {
        "type": ctype,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": why[0],
        "message": why[1],
    }


class JobController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "job-controller")
        self.pods = PodControl(self.store, self.events)  # SuccessfulCreate / FailedCreate

    def reconcile(self, ns: str, name: str) -> None:
        job = self.store.find(JOBS, ns, name)
        if job is None or job["metadata"].get("deletionTimestamp") or finished(job):
            return
        spec = job.get("spec") or {}
        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, job)]
        active = [p for p in pods if phase(p) not in ("Succeeded", "Failed") and not terminating(p)]
        gone = [p for p in pods if terminating(p) and phase(p) not in ("Succeeded", "Failed")]
        succeeded = sum(1 for p in pods if phase(p) == "Succeeded")
        failed = sum(1 for p in pods if phase(p) == "Failed")
        now = now_rfc3339()
        status = copy.deepcopy(job.get("status") or {})
        status.setdefault("startTime", now)
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism", 1))
        backoff_limit = int(spec.get("backoffLimit", 6))

        failure = _condition(job, "FailureTarget")
        why = None if failure is None else (failure["reason"], failure["message"])
        if why is None and (failed > backoff_limit or self._past_backoff_on_failure(job, active)):
            why = BACKOFF
        deadline = spec.get("activeDeadlineSeconds")
        if why is None and deadline is not None:
            elapsed = (dt.datetime.now(dt.UTC) - parse_time(status["startTime"])).total_seconds()
            if elapsed >= int(deadline):
                why = DEADLINE
        complete = why is None and (
            succeeded >= int(completions) if completions is not None else succeeded > 0 and not active
        )

        conditions = list(status.get("conditions") or [])
        if why is not None:
            if failure is None:
                conditions.append(_new_condition("FailureTarget", why, now))
            for p in active:
                self.cluster.delete_object(
                    PODS, ns, p["metadata"]["name"], grace=None, propagation="Background"
                )
                self.events.event(
                    self._ref(job), "Normal", "SuccessfulDelete", f"Deleted pod: {p['metadata']['name']}"
                )
            if not active and not gone:
                conditions.append(_new_condition("Failed", why, now))
                self.events.event(self._ref(job), "Warning", why[0], why[1])
            active = []
        elif complete:
            conditions.append(_new_condition("SuccessCriteriaMet", COMPLETED, now))
            conditions.append(_new_condition("Complete", COMPLETED, now))
            status["completionTime"] = now
            self.events.event(self._ref(job), "Normal", "Completed", "Job completed")
        else:
            want = parallelism
            if completions is not None:
                want = min(parallelism, int(completions) - succeeded)
            elif succeeded > 0:
                want = 0  # one success finishes the Job: let the others run out
            if len(active) < want and self._backoff_passed(pods, failed) and self.pods.may_create(job):
                for _ in range(want - len(active)):
                    made = self._create_pod(job)
                    if isinstance(made, ApiError):
                        break  # slowStartBatch: the rest is not sent
                    active.append(made)
        status.update(
            {
                "active": len(active),
                "succeeded": succeeded,
                "failed": failed,
                "ready": sum(1 for p in active if is_ready(p)),
                "terminating": len(gone),
                "uncountedTerminatedPods": {},
            }
        )
        if conditions:
            status["conditions"] = conditions
        for k in ("active", "succeeded", "failed"):
            if not status[k]:
                del status[k]  # omitempty, unlike the pointers ready and terminating
        self.store.mutate(JOBS, ns, name, lambda o: o.__setitem__("status", status), status=True)

    @staticmethod
    def _past_backoff_on_failure(job: Obj, active: list[Obj]) -> bool:
        """`pastBackoffLimitOnFailure`: with restartPolicy OnFailure the kubelet restarts the
        container in place, so the active pods' restart counts are the failures."""
        tpl_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        if tpl_spec.get("restartPolicy") != "OnFailure":
            return False
        limit = int(job["spec"].get("backoffLimit", 6))
        restarts = sum(
            int(c.get("restartCount", 0))
            for p in active
            for c in ((p.get("status") or {}).get("containerStatuses") or [])
            + ((p.get("status") or {}).get("initContainerStatuses") or [])
        )
        return restarts > 0 if limit == 0 else restarts >= limit

    def _backoff_passed(self, pods: list[Obj], failed: int) -> bool:
        """The pod failure back-off: base * 2^(failures - 1) after the last failure (the
        controller's queue holds the Job that long; the manager's resync retries it)."""
        if not failed:
            return True
        base = self.cluster.knobs.job_backoff
        delay = min(base * 2 ** (failed - 1), MAX_BACKOFF)
        last = max(
            (
                c["state"]["terminated"].get("finishedAt") or ""
                for p in pods
                if phase(p) == "Failed"
                for c in (p.get("status") or {}).get("containerStatuses") or []
                if "terminated" in (c.get("state") or {})
            ),
            default="",
        )
        if not last:
            return True
        return (dt.datetime.now(dt.UTC) - parse_time(last)).total_seconds() >= delay

    @staticmethod
    def _ref(job: Obj) -> Obj:
        return object_ref(job, kind="Job", api_version="batch/v1")

    def _create_pod(self, job: Obj) -> Obj | ApiError:
        """The template's pod, named by the apiserver from `generateName` (NAME-xxxxx)."""
        tpl = copy.deepcopy(job["spec"]["template"])
        meta = tpl.get("metadata") or {}
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{job['metadata']['name']}-",
                "labels": meta.get("labels") or {},
                "ownerReferences": [controller_ref(job)],
            },
            "spec": tpl.get("spec") or {},
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        }
        if meta.get("annotations"):
            pod["metadata"]["annotations"] = meta["annotations"]
        return self.pods.create(job, pod)
