"""The Argo Rollouts AnalysisRun controller with the Job metric provider: one Job per
measurement, the measurement Successful or Failed as the Job ends, and the run's phase from count,
interval, initialDelay, failureLimit, inconclusiveLimit and consecutiveErrorLimit; a run fails as
soon as one metric does. (A Rollout's runs are built in rollout_analysis.py.)

Read from argoproj/argo-rollouts v1.9.1: analysis/analysis.go (reconcileAnalysisRun,
generateMetricTasks, runMeasurements, assessRunStatus, assessMetricStatus,
assessMetricFailureInconclusiveOrError and its message, "Metric \"NAME\" assessed Failed due to
failed (1) > failureLimit (0)"), metricproviders/job/job.go (Job NAME `<run uid>.<metric>.<n>`,
its labels, annotations and controller reference, Resume from the Job's Complete/Failed
condition, Terminate deletes it), utils/analysis/helpers.go (IsTerminating), utils/template
(`{{args.NAME}}`, quoted as JSON strings), pkg/apis/rollouts/v1alpha1 (EffectiveCount: one
measurement without count and interval).

Not emulated: providers other than job (a metric with another is an Error measurement, as an
unknown provider is), dryRun and measurementRetention, the measurements' history limit (10), and
the controller's requeue timing (kubesim's tick looks at every running AnalysisRun)."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import re
import uuid
from typing import TYPE_CHECKING, Any

from ..apiserver.admission import prepare
from ..apiserver.jobs import admit_job
from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj, now_rfc3339
from .podutil import controller_ref, parse_time

if TYPE_CHECKING:
    from ..cluster import Cluster

GROUP = "argoproj.io"
JOBS = BY_PATH[("batch", "jobs")]
SECRETS = BY_PATH[("", "secrets")]
RUN_UID = "analysisrun.argoproj.io/uid"
RUN_NAME = "analysisrun.argoproj.io/name"
RUN_NAMESPACE = "analysisrun.argoproj.io/namespace"
RUN_METRIC = "analysisrun.argoproj.io/metric-name"
COMPLETED = ("Successful", "Failed", "Error", "Inconclusive")
ERROR_RETRY = 10.0  # DefaultErrorRetryInterval
CONSECUTIVE_ERROR_LIMIT = 4  # DefaultConsecutiveErrorLimit
DNS_LIMIT = 63  # defaults.Kubernetes_DNS_Limit
_TAG = re.compile(r"\{\{(.*?)\}\}")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _int(value: Any, default: int) -> int:
    """An IntOrString after argument resolution ("{{args.x}}" becomes "2")."""
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _seconds(value: Any) -> float:
    """DurationString.Duration: "10s", "1m", "500ms"; -1 when unreadable."""
    text = str(value or "")
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    total, pos = 0.0, 0
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text):
        if m.start() != pos:
            return -1.0
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    return total if text and pos == len(text) else -1.0


def resolve_args(text: str, args: list[Obj]) -> str:
    """templateutil.ResolveQuotedArgs: every `{{args.NAME}}` (spaces allowed inside the braces)
    replaced by the argument's value, escaped as within a JSON string; raises ValueError for an
    argument without a value or a tag no argument names."""
    values: dict[str, str] = {}
    for arg in args:
        if arg.get("value") is None:
            raise ValueError(f'argument "{arg.get("name")}" was not supplied')
        values[f"args.{arg['name']}"] = json.dumps(str(arg["value"]))[1:-1]
    unresolved: list[str] = []

    def sub(m: re.Match[str]) -> str:
        tag = m.group(1).strip()
        if tag in values:
            return values[tag]
        unresolved.append(m.group(1))
        return ""

    out = _TAG.sub(sub, text)
    if unresolved:
        raise ValueError(f"failed to resolve {{{{{unresolved[-1]}}}}}")
    return out


def resolve_metric(metric: Obj, args: list[Obj]) -> Obj:
    resolved: Obj = json.loads(resolve_args(json.dumps(metric), args))
    return resolved


def _terminating(run: Obj) -> bool:
    """analysisutil.IsTerminating: asked to, or a metric already Failed, Error or Inconclusive
    (the others then stop: a run fails as soon as one of its metrics does)."""
    if (run.get("spec") or {}).get("terminate"):
        return True
    results = (run.get("status") or {}).get("metricResults") or []
    return any(r.get("phase") in ("Failed", "Error", "Inconclusive") for r in results)


def _effective_count(metric: Obj) -> int | None:
    """Metric.EffectiveCount: count, else 1 without an interval, else no limit."""
    count = _int(metric.get("count"), 0)
    if count == 0:
        return 1 if not metric.get("interval") else None
    return count


class _Invalid(Exception):
    """A run that cannot be measured at all: it ends in Error with this message."""


class AnalysisRunController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "rollouts-controller")

    def reconcile(self, ns: str, name: str) -> None:
        res = self.store.custom.lookup(GROUP, "analysisruns")
        run = None if res is None else self.store.find(res, ns, name)
        if res is None or run is None or run["metadata"].get("deletionTimestamp"):
            return
        status = run.get("status") or {}
        if status.get("phase") in COMPLETED:
            return
        run = copy.deepcopy(run)
        status = run.setdefault("status", {})
        status.setdefault("metricResults", [])
        spec = run.get("spec") or {}
        try:
            metrics = self._resolved(spec, secrets=False, namespace=ns)
            if not metrics:
                raise _Invalid("Analysis spec invalid: no metrics specified")
            real = self._resolved(spec, secrets=True, namespace=ns)
        except (ValueError, _Invalid) as e:
            why = str(e) if isinstance(e, _Invalid) else f"Unable to resolve metric arguments: {e}"
            self._finish(run, "Error", why)
            self._write(res, run)
            return
        for metric, resolved in zip(metrics, real, strict=True):
            self._measure(run, metric, resolved)
        phase, message = self._assess(run, metrics)
        if phase != status.get("phase"):
            if phase in COMPLETED:
                self._finish(run, phase, message)
            else:
                status["phase"] = phase
                if message:
                    status["message"] = message
        self._write(res, run)

    def _resolved(self, spec: Obj, *, secrets: bool, namespace: str) -> list[Obj]:
        """getResolvedMetricsWithoutSecrets (a placeholder for valueFrom.secretKeyRef), or with
        the Secrets read (resolveArgs)."""
        args = []
        for arg in spec.get("args") or []:
            arg = copy.deepcopy(arg)
            ref = (arg.get("valueFrom") or {}).get("secretKeyRef")
            if ref:
                arg.pop("valueFrom")
                arg["value"] = self._secret(namespace, ref) if secrets else "temp-for-secret"
            args.append(arg)
        return [resolve_metric(m, args) for m in spec.get("metrics") or []]

    def _secret(self, namespace: str, ref: Obj) -> str:
        secret = self.store.find(SECRETS, namespace, str(ref.get("name", "")))
        if secret is None:
            raise ValueError(f'secrets "{ref.get("name")}" not found')
        data = secret.get("data") or {}
        if ref.get("key") not in data:
            raise ValueError(f"key '{ref.get('key')}' does not exist in secret '{ref.get('name')}'")
        return base64.b64decode(data[ref["key"]]).decode("utf-8", "replace")

    @staticmethod
    def _result(run: Obj, name: str) -> Obj | None:
        return next((r for r in run["status"]["metricResults"] if r.get("name") == name), None)

    def _measure(self, run: Obj, metric: Obj, resolved: Obj) -> None:
        """generateMetricTasks and runMeasurements for one metric."""
        result = self._result(run, metric["name"])
        if result is not None and result.get("phase") in COMPLETED:
            return
        last = (
            (result or {}).get("measurements", [None])[-1] if result and result.get("measurements") else None
        )
        terminating = _terminating(run)
        now = _now()
        if last is not None and not last.get("finishedAt"):
            measurement = self._terminate(run, last) if terminating else self._resume(run, last)
            self._record(run, metric, measurement, replace=True)
            return
        if terminating:
            return
        if last is None:
            delay = metric.get("initialDelay")
            if delay:
                started = (run.get("status") or {}).get("startedAt")
                if not started or parse_time(started) + dt.timedelta(seconds=_seconds(delay)) > now:
                    run["status"].setdefault("startedAt", now_rfc3339())
                    return
        else:
            count = _effective_count(metric)
            if count is not None and int((result or {}).get("count") or 0) >= count:
                return
            interval = (
                ERROR_RETRY if last.get("phase") == "Error" else _seconds(metric.get("interval") or "10s")
            )
            if parse_time(last["finishedAt"]) + dt.timedelta(seconds=max(0.0, interval)) >= now:
                return
        self._record(run, metric, self._run(run, resolved), replace=False)

    def _record(self, run: Obj, metric: Obj, measurement: Obj, *, replace: bool) -> None:
        result = self._result(run, metric["name"])
        if result is None:
            result = {"name": metric["name"], "phase": "Running", "measurements": []}
            run["status"]["metricResults"].append(result)
        phase = measurement.get("phase")
        if phase in COMPLETED:
            measurement.setdefault("finishedAt", now_rfc3339())
            key = {
                "Successful": "successful",
                "Failed": "failed",
                "Inconclusive": "inconclusive",
                "Error": "error",
            }[phase]
            result[key] = int(result.get(key) or 0) + 1
            if phase != "Error":
                result["count"] = int(result.get("count") or 0) + 1
                result.pop("consecutiveError", None)
            else:
                result["consecutiveError"] = int(result.get("consecutiveError") or 0) + 1
            if phase == "Successful":
                result["consecutiveSuccess"] = int(result.get("consecutiveSuccess") or 0) + 1
            else:
                result.pop("consecutiveSuccess", None)
        measurements = result.setdefault("measurements", [])
        if replace and measurements:
            measurements[-1] = measurement
        else:
            measurements.append(measurement)

    # -- the Job provider -----------------------------------------------------------------------
    def _run(self, run: Obj, metric: Obj) -> Obj:
        """JobProvider.Run: one Job per measurement, owned by the run."""
        started = now_rfc3339()
        job_spec = (((metric.get("provider") or {}).get("job")) or {}).get("spec")
        if job_spec is None:
            kinds = ", ".join(sorted((metric.get("provider") or {}).keys())) or "none"
            return {
                "startedAt": started,
                "phase": "Error",
                "message": f"no metric provider kubesim runs: {kinds}",
                "finishedAt": started,
            }
        ns = run["metadata"]["namespace"]
        result = self._result(run, metric["name"]) or {}
        n = int(result.get("count") or 0) + int(result.get("error") or 0) + 1
        uid = run["metadata"]["uid"]
        job_name = f"{uid}.{metric['name']}.{n}"
        if len(job_name) > DNS_LIMIT:
            job_name = f"{uid}.{metric['name'][: len(metric['name']) - (len(job_name) - DNS_LIMIT)]}.{n}"
        meta = (metric["provider"]["job"].get("metadata")) or {}
        job: Obj = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name,
                "labels": {**(meta.get("labels") or {}), RUN_UID: uid},
                "annotations": {
                    **(meta.get("annotations") or {}),
                    RUN_NAME: run["metadata"]["name"],
                    RUN_NAMESPACE: ns,
                    RUN_METRIC: metric["name"],
                },
                "ownerReferences": [controller_ref(run)],
            },
            "spec": copy.deepcopy(job_spec),
        }
        try:  # an API client's create: defaulted, its selector generated from its uid
            prepare(JOBS, job)
            job_uid = str(uuid.uuid4())
            job["metadata"]["uid"] = job_uid
            admit_job(job)
            created = self.store.create(JOBS, ns, job, uid=job_uid)
        except ApiError as e:
            existing = self.store.find(JOBS, ns, job_name)
            if (
                e.code != 409
                or existing is None
                or not any(r.get("uid") == uid for r in existing["metadata"].get("ownerReferences") or [])
            ):
                return {"startedAt": started, "phase": "Error", "message": e.message, "finishedAt": started}
            created = existing
        return {
            "startedAt": started,
            "phase": "Running",
            "metadata": {"job-name": created["metadata"]["name"], "job-namespace": ns},
        }

    def _job(self, run: Obj, measurement: Obj) -> tuple[str, str] | None:
        meta = measurement.get("metadata") or {}
        if not meta.get("job-name"):
            return None
        return str(meta.get("job-namespace") or run["metadata"]["namespace"]), str(meta["job-name"])

    def _resume(self, run: Obj, measurement: Obj) -> Obj:
        """JobProvider.Resume: Successful on the Job's Complete condition, Failed on Failed."""
        where = self._job(run, measurement)
        out = dict(measurement)
        if where is None:
            return {
                **out,
                "phase": "Error",
                "message": "job metadata reference missing",
                "finishedAt": now_rfc3339(),
            }
        job = self.store.find(JOBS, *where)
        if job is None:
            return {
                **out,
                "phase": "Error",
                "message": f'job.batch "{where[1]}" not found',
                "finishedAt": now_rfc3339(),
            }
        for cond in (job.get("status") or {}).get("conditions") or []:
            if cond.get("status") != "True":
                continue
            if cond.get("type") == "Complete":
                out.update(phase="Successful", finishedAt=now_rfc3339())
            elif cond.get("type") == "Failed":
                out.update(phase="Failed", finishedAt=now_rfc3339())
        return out

    def _terminate(self, run: Obj, measurement: Obj) -> Obj:
        """JobProvider.Terminate: the Job deleted, the measurement Successful ("Metric Terminated")."""
        where = self._job(run, measurement)
        if where is not None and self.store.find(JOBS, *where) is not None:
            self.cluster.delete_object(JOBS, *where, grace=None, propagation="Foreground")
        return {
            **measurement,
            "phase": "Successful",
            "message": "Metric Terminated",
            "finishedAt": now_rfc3339(),
        }

    # -- assessment -----------------------------------------------------------------------------
    @staticmethod
    def _failure(metric: Obj, result: Obj) -> tuple[str, str]:
        """assessMetricFailureInconclusiveOrError."""
        phase = message = ""
        failure_limit = _int(metric.get("failureLimit"), 0)
        failed = int(result.get("failed") or 0)
        if failure_limit >= 0 and failed > failure_limit:
            phase, message = "Failed", f"failed ({failed}) > failureLimit ({failure_limit})"
        inconclusive_limit = _int(metric.get("inconclusiveLimit"), 0)
        inconclusive = int(result.get("inconclusive") or 0)
        if inconclusive > inconclusive_limit:
            phase, message = (
                "Inconclusive",
                f"inconclusive ({inconclusive}) > inconclusiveLimit ({inconclusive_limit})",
            )
        error_limit = _int(metric.get("consecutiveErrorLimit"), CONSECUTIVE_ERROR_LIMIT)
        errors = int(result.get("consecutiveError") or 0)
        if errors > error_limit:
            phase, message = "Error", f"consecutiveErrors ({errors}) > consecutiveErrorLimit ({error_limit})"
        return phase, message

    def _metric_phase(self, metric: Obj, result: Obj, terminating: bool) -> str:
        """assessMetricStatus."""
        if result.get("phase") in COMPLETED:
            return str(result["phase"])
        measurements = result.get("measurements") or []
        if not measurements:
            return "Successful" if terminating else "Pending"
        if measurements[-1].get("phase") not in COMPLETED:
            return "Running"
        phase, _ = self._failure(metric, result)
        if phase:
            return phase
        count = _effective_count(metric)
        if count is not None and int(result.get("count") or 0) >= count:
            return "Successful"
        return "Successful" if terminating else "Running"

    def _assess(self, run: Obj, metrics: list[Obj]) -> tuple[str, str]:
        """assessRunStatus: the worst completed metric's phase, once every metric completed."""
        order = {"Successful": 0, "Inconclusive": 1, "Error": 2, "Failed": 3}
        status = run["status"]
        terminating = _terminating(run)
        status.setdefault("startedAt", now_rfc3339())
        worst, message = "", "Run Terminated" if (run.get("spec") or {}).get("terminate") else ""
        everything = True
        summary = {"count": 0, "successful": 0, "failed": 0, "inconclusive": 0, "error": 0}
        for metric in metrics:
            summary["count"] += 1
            result = self._result(run, metric["name"])
            if result is None:
                everything = False
                continue
            phase = self._metric_phase(metric, result, terminating)
            if result.get("phase") != phase:
                if phase in COMPLETED:
                    kind = "Warning" if phase in ("Error", "Failed") else "Normal"
                    self.events.event(
                        self._ref(run),
                        kind,
                        f"Metric{phase}",
                        f"Metric '{metric['name']}' Completed. Result: {phase}",
                    )
                measurements = result.get("measurements") or []
                if measurements and measurements[-1].get("message"):
                    result["message"] = measurements[-1]["message"]
                result["phase"] = phase
            if phase not in COMPLETED:
                everything = False
                continue
            failure, why = self._failure(metric, result)
            if not worst or order.get(phase, 0) > order.get(worst, 0):
                worst = phase
                if why:
                    message = f'Metric "{metric["name"]}" assessed {phase} due to {why}'
                    if result.get("message"):
                        message += f': "Error Message: {result["message"]}"'
            key = {"Error": "error", "Failed": "failed", "Inconclusive": "inconclusive"}.get(
                failure, "successful"
            )
            summary[key] += 1
        status["runSummary"] = {k: v for k, v in summary.items() if v}
        status["dryRunSummary"] = {}
        if terminating:
            return worst or "Successful", message.strip()
        if not everything or not worst:
            return "Running", ""
        return worst, message.strip()

    def _finish(self, run: Obj, phase: str, message: str) -> None:
        status = run["status"]
        status["phase"] = phase
        if message:
            status["message"] = message
        status.setdefault("startedAt", now_rfc3339())
        status.setdefault("completedAt", now_rfc3339())
        kind = "Warning" if phase in ("Error", "Failed") else "Normal"
        self.events.event(self._ref(run), kind, f"AnalysisRun{phase}", f"Analysis Completed. Result: {phase}")

    @staticmethod
    def _ref(run: Obj) -> Obj:
        return object_ref(run, kind="AnalysisRun", api_version=f"{GROUP}/v1alpha1")

    def _write(self, res: Any, run: Obj) -> None:
        """The controller updates the whole run (the CRD has no status subresource)."""
        self.store.mutate(
            res,
            run["metadata"]["namespace"],
            run["metadata"]["name"],
            lambda o: o.__setitem__("status", run["status"]),
        )
