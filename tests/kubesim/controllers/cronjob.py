"""The CronJob controller (kubernetes/kubernetes pkg/controller/cronjob/cronjob_controllerv2.go
sync, syncCronJob, cleanupFinishedJobs; utils.go getJobFromTemplate2, mostRecentScheduleTime):
at each scheduled time a Job `NAME-<minutes since the epoch>` from the job template (its labels
and annotations, the `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation, the CronJob as
controller), unless suspended, too late for `startingDeadlineSeconds` (MissSchedule) or, under
Forbid, a Job is still active (JobAlreadyActive); Replace deletes the active ones first.
`status.active`, `lastScheduleTime` and `lastSuccessfulTime` follow the Jobs, finished Jobs
beyond `successfulJobsHistoryLimit`/`failedJobsHistoryLimit` are deleted oldest first, and the
events are upstream's (SuccessfulCreate "Created job X", SawCompletedJob, SuccessfulDelete,
UnexpectedJob for a Job made by hand, e.g. `kubectl create job --from=cronjob/X`).

It idles cheaply: each CronJob is synced when it or one of its Jobs changes, and otherwise only
at its next scheduled time. `Knobs.cron_speed` runs the schedule's clock faster than the wall's
(60: a minute a second), so a test sees a `*/1 * * * *` CronJob fire without waiting minutes."""

from __future__ import annotations

import copy
import datetime as dt
import time
import uuid
import zoneinfo
from typing import TYPE_CHECKING

from croniter import croniter

from ..apiserver.jobs import admit_job
from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .duetimes import DueTimes
from .job import finished
from .podutil import parse_time
from .refmanager import controller_of

if TYPE_CHECKING:
    from ..cluster import Cluster

CRONJOBS = BY_PATH[("batch", "cronjobs")]
JOBS = BY_PATH[("batch", "jobs")]
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_FMT = "%Y-%m-%dT%H:%M:%SZ"


class CronJobController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "cronjob-controller")
        self.due = DueTimes()  # the next sync of each CronJob: its next scheduled time
        self.born: dict[str, dt.datetime] = {}  # uid -> its creation on the schedule's clock
        self._t0 = (time.monotonic(), dt.datetime.now(dt.UTC))

    # -- the schedule's clock ------------------------------------------------
    def now(self) -> dt.datetime:
        speed = self.cluster.knobs.cron_speed
        mono, wall = self._t0
        return wall + dt.timedelta(seconds=(time.monotonic() - mono) * speed)

    def _wait(self, until: dt.datetime) -> float:
        """Real seconds until the schedule's clock reads `until`."""
        speed = self.cluster.knobs.cron_speed or 1.0
        return max((until - self.now()).total_seconds() / speed, 0.0)

    # -- sync ------------------------------------------------------------------
    def reconcile(self, ns: str, name: str) -> None:
        self.due.cancel((ns, name))
        cj = self.store.find(CRONJOBS, ns, name)
        if cj is None:
            return
        jobs = [
            j
            for j in self.store.list(JOBS, ns)
            if (controller_of(j) or {}).get("name") == name
            and (controller_of(j) or {}).get("kind") == "CronJob"
        ]
        status = copy.deepcopy(cj.get("status") or {})
        self._cleanup(cj, jobs, status)
        wait = self._sync(cj, [j for j in jobs if self.store.find(JOBS, ns, j["metadata"]["name"])], status)
        if status != (cj.get("status") or {}):
            self.store.mutate(CRONJOBS, ns, name, lambda o: o.__setitem__("status", status), status=True)
        if wait is not None:
            self.due.after((ns, name), wait)

    def _ref(self, cj: Obj) -> Obj:
        return object_ref(cj, kind="CronJob", api_version="batch/v1")

    def _sync(self, cj: Obj, jobs: list[Obj], status: Obj) -> float | None:
        """syncCronJob: the real seconds until it must be synced again, or None."""
        ns, name = cj["metadata"]["namespace"], cj["metadata"]["name"]
        spec = cj.get("spec") or {}
        active = list(status.get("active") or [])
        children = {j["metadata"]["uid"] for j in jobs}
        for j in jobs:
            listed = any(a.get("uid") == j["metadata"]["uid"] for a in active)
            if not listed and not finished(j):
                self.events.event(
                    self._ref(cj),
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {j['metadata']['name']}",
                )
            elif finished(j):
                if listed:
                    active = [a for a in active if a.get("uid") != j["metadata"]["uid"]]
                    kind = next(
                        c["type"]
                        for c in (j.get("status") or {}).get("conditions") or []
                        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                    )
                    self.events.event(
                        self._ref(cj),
                        "Normal",
                        "SawCompletedJob",
                        f"Saw completed job: {j['metadata']['name']}, condition: {kind}",
                    )
                done = (j.get("status") or {}).get("completionTime")
                if _succeeded(j) and done and done > str(status.get("lastSuccessfulTime") or ""):
                    status["lastSuccessfulTime"] = done
        for a in list(active):
            if a.get("uid") not in children:
                self.events.event(
                    self._ref(cj), "Normal", "MissingJob", f"Active job went missing: {a.get('name')}"
                )
                active = [x for x in active if x.get("uid") != a.get("uid")]
        _set_active(status, active)
        if cj["metadata"].get("deletionTimestamp") or spec.get("suspend"):
            return None
        schedule, zone = _schedule(spec)
        if schedule is None:
            self.events.event(
                self._ref(cj),
                "Warning",
                "UnparseableSchedule",
                f'unparseable schedule: "{spec.get("schedule")}" : invalid',
            )
            return None
        now = self.now().astimezone(zone)
        scheduled = self._most_recent(cj, status, schedule, now)
        nxt = croniter(schedule, now).get_next(dt.datetime)
        if scheduled is None:
            return self._wait(nxt)
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + dt.timedelta(seconds=int(deadline)) < now:
            self.events.event(
                self._ref(cj),
                "Warning",
                "MissSchedule",
                f"Missed scheduled time to start a job: {scheduled.astimezone(dt.UTC).strftime('%a, %d %b %Y %H:%M:%S +0000')}",
            )
            return self._wait(nxt)
        job_name = f"{name}-{int(scheduled.timestamp()) // 60}"
        if any(a.get("name") == job_name for a in active) or status.get("lastScheduleTime") == _utc(
            scheduled
        ):
            return self._wait(nxt)
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.events.event(
                self._ref(cj),
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return self._wait(nxt)
        if policy == "Replace":
            for a in active:
                self._delete_job(cj, a.get("name", ""))
            active = []
        made = self._create_job(cj, job_name, scheduled)
        if made is None:
            return self._wait(nxt)
        active.append(
            {
                "kind": "Job",
                "namespace": ns,
                "name": made["metadata"]["name"],
                "uid": made["metadata"]["uid"],
                "apiVersion": "batch/v1",
                "resourceVersion": made["metadata"]["resourceVersion"],
            }
        )
        _set_active(status, active)
        status["lastScheduleTime"] = _utc(scheduled)
        return self._wait(nxt)

    def _most_recent(self, cj: Obj, status: Obj, schedule: str, now: dt.datetime) -> dt.datetime | None:
        """mostRecentScheduleTime: the latest scheduled time after the last one (or the CronJob's
        creation, or the starting deadline) that is not after now; None if none has come."""
        if status.get("lastScheduleTime"):
            earliest = parse_time(status["lastScheduleTime"])
        elif self.cluster.knobs.cron_speed == 1.0:
            earliest = parse_time(cj["metadata"]["creationTimestamp"])
        else:
            earliest = self.born.setdefault(cj["metadata"]["uid"], self.now())
        deadline = (cj.get("spec") or {}).get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - dt.timedelta(seconds=int(deadline)))
        it = croniter(schedule, earliest.astimezone(now.tzinfo))
        found = None
        for _ in range(1000):  # more missed times than this: the latest is found from now
            t = it.get_next(dt.datetime)
            if t > now:
                return found
            found = t
        prev: dt.datetime = croniter(schedule, now + dt.timedelta(seconds=1)).get_prev(dt.datetime)
        return prev

    def _create_job(self, cj: Obj, name: str, scheduled: dt.datetime) -> Obj | None:
        """getJobFromTemplate2, created as the controller's client would (admission included)."""
        ns = cj["metadata"]["namespace"]
        template = copy.deepcopy((cj.get("spec") or {}).get("jobTemplate") or {})
        meta = template.get("metadata") or {}
        annotations = dict(meta.get("annotations") or {})
        annotations[SCHEDULED] = scheduled.isoformat().replace("+00:00", "Z")
        uid = str(uuid.uuid4())
        job: Obj = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "uid": uid,
                "annotations": annotations,
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": cj["metadata"]["name"],
                        "uid": cj["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": template.get("spec") or {},
        }
        if meta.get("labels"):
            job["metadata"]["labels"] = dict(meta["labels"])
        try:
            admit_job(job)
            made = self.store.create(JOBS, ns, job, uid=uid)
        except ApiError as e:
            if e.code == 409:  # made before the status said so: take it if it is ours
                found = self.store.find(JOBS, ns, name)
                if found is not None and (controller_of(found) or {}).get("uid") == cj["metadata"]["uid"]:
                    return found
                return None
            self.events.event(self._ref(cj), "Warning", "FailedCreate", f"Error creating job: {e.message}")
            return None
        self.events.event(self._ref(cj), "Normal", "SuccessfulCreate", f"Created job {name}")
        return made

    def _delete_job(self, cj: Obj, name: str) -> None:
        ns = cj["metadata"]["namespace"]
        if self.store.find(JOBS, ns, name) is None:
            return
        self.cluster.delete_object(JOBS, ns, name, grace=None, propagation="Background")
        self.events.event(self._ref(cj), "Normal", "SuccessfulDelete", f"Deleted job {name}")

    def _cleanup(self, cj: Obj, jobs: list[Obj], status: Obj) -> None:
        """cleanupFinishedJobs: the oldest finished Jobs beyond the history limits go."""
        spec = cj.get("spec") or {}
        for limit_key, want in (("successfulJobsHistoryLimit", True), ("failedJobsHistoryLimit", False)):
            limit = spec.get(limit_key)
            if limit is None:
                continue
            done = [j for j in jobs if finished(j) and _succeeded(j) == want]
            done.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or "~", j["metadata"]["name"]))
            for j in done[: max(len(done) - int(limit), 0)]:
                self._delete_job(cj, j["metadata"]["name"])
                active = [a for a in status.get("active") or [] if a.get("uid") != j["metadata"]["uid"]]
                _set_active(status, active)


def _succeeded(job: Obj) -> bool:
    return any(
        c.get("type") == "Complete" and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def _set_active(status: Obj, active: list[Obj]) -> None:
    if active:
        status["active"] = active
    else:
        status.pop("active", None)


def _schedule(spec: Obj) -> tuple[str | None, dt.tzinfo]:
    """The five fields and the time zone they are read in (`timeZone`, or a `TZ=` prefix)."""
    text = str(spec.get("schedule") or "").strip()
    zone_name = spec.get("timeZone") or ""
    if text.startswith(("TZ=", "CRON_TZ=")) and " " in text:
        prefix, text = text.split(None, 1)
        zone_name = prefix.split("=", 1)[1]
    text = {
        "@yearly": "0 0 1 1 *",
        "@annually": "0 0 1 1 *",
        "@monthly": "0 0 1 * *",
        "@weekly": "0 0 * * 0",
        "@daily": "0 0 * * *",
        "@midnight": "0 0 * * *",
        "@hourly": "0 * * * *",
    }.get(text, text)
    try:
        zone: dt.tzinfo = zoneinfo.ZoneInfo(zone_name) if zone_name else dt.UTC
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None, dt.UTC
    if len(text.split()) != 5 or not croniter.is_valid(text):
        return None, zone
    return text, zone


def _utc(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime(_FMT)
