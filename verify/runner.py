"""The job itself: for each workload, wait, select, inspect, judge, restart at most once,
inspect again. Workloads run in parallel; each gets its own verdict and restart budget."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import json
import os
import secrets
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from verify import kube, retry
from verify.config import Job, Settings, TargetPlan, plan_target
from verify.diagnosis import diagnose
from verify.inspect import Inspector
from verify.judge import judge_attempt
from verify.model import (
    AttemptVerdict,
    CheckStatus,
    Expectations,
    ExpectedFile,
    FileSpec,
    HttpExpectation,
    PodObservation,
)
from verify.policy import RESTART_RECORD, RESTART_RECORD_AT, decide, restart_key
from verify.proxy import Prober
from verify.report import RunResult, WorkloadResult, combine, problem_lines
from verify.rollout import (
    PodSelection,
    select_current_pods,
    select_daemonset_pods,
    select_statefulset_pods,
    waiting_reasons,
)
from verify.spec import Ref, derive, mark_secret_files, referenced_objects
from verify.targets import KINDS, PLURAL, WorkloadRef, api_path
from verify.watcher import RolloutNotComplete, wait_for_rollout

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_UNREADABLE, EXIT_ROLLOUT, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
GRACE_POLL = 2.0  # seconds between re-checks of a volume awaiting the kubelet's refresh
MAX_PARALLEL_WORKLOADS = 16

Log = Callable[[str], None]
SourceVersion = tuple[str, str, str, str]  # (kind, name, uid, resourceVersion)


class Logs(Protocol):
    """Where progress lines go; the CLI groups them per workload on GitHub and GitLab."""

    def run(self, line: str) -> None: ...

    def begin(self, labels: Sequence[str]) -> None: ...

    def workload(self, label: str) -> Log: ...

    def end(self, label: str) -> None: ...


class SourceError(Exception):
    """An expected file's source object or key does not exist: the expectation cannot be read."""


@dataclass
class Shared:
    """What every workload of one run shares: one deadline, one client, one exec budget."""

    settings: Settings
    api: kube.Api
    inspector: Inspector
    prober: Prober


@dataclass
class Run:
    """Mutable state of one workload's verification; `restart_sent` is checked before any patch,
    `restarts` counts the patches the API server accepted (or may have)."""

    shared: Shared
    plan: TargetPlan
    namespace: str
    label: str
    log: Log
    restarts: int = 0
    restart_sent: bool = False
    rechecks: int = 0  # inspections repeated because pods were deleted while being inspected
    attempts_at_restart: int = -1  # how many attempts preceded the (possible) restart
    prior_restart: str = ""  # when an earlier run already restarted this revision, its time
    attempts: list[AttemptVerdict] = field(default_factory=list)
    # ConfigMaps/Secrets read in this attempt (None: not found), each once
    objects: dict[Ref, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def api(self) -> kube.Api:
        return self.shared.api


def _get_source(run: Run, kind: str, name: str) -> dict[str, Any] | None:
    """A ConfigMap/Secret, read once per attempt however many expectations name it, so they all
    judge against the same version."""
    if (kind, name) in run.objects:
        return run.objects[(kind, name)]
    plural = "configmaps" if kind == "configmap" else "secrets"
    obj: dict[str, Any] | None
    try:
        obj = run.api.get(f"/api/v1/namespaces/{run.namespace}/{plural}/{name}")
    except kube.KubeError as e:
        if e.status != 404:
            raise
        obj = None
    run.objects[(kind, name)] = obj
    return obj


def _source_versions(run: Run) -> list[SourceVersion]:
    """(kind, name, uid, resourceVersion) of every object this attempt read: the restart record."""
    out: list[SourceVersion] = []
    for (kind, name), obj in run.objects.items():
        if obj is not None:
            meta = obj.get("metadata") or {}
            out.append((kind, name, str(meta.get("uid", "")), str(meta.get("resourceVersion", ""))))
    return out


def resolve_expectations(run: Run, *, env: Sequence[str], files: Sequence[FileSpec]) -> Expectations:
    """Expected digests, read from the live ConfigMaps/Secrets; Secret values are hashed at once."""
    out: list[ExpectedFile] = []
    for spec in files:
        if spec.source == "sha256":
            out.append(ExpectedFile(path=spec.path, sha256=spec.digest.lower(), origin="sha256"))
            continue
        obj = _get_source(run, spec.source, spec.name)
        if obj is None:
            raise SourceError(
                f"{spec.source} {spec.name} (for {spec.path}) does not exist in namespace {run.namespace}"
            )
        if spec.source == "configmap":
            data = obj.get("data") or {}
            binary = obj.get("binaryData") or {}
            if spec.key in data:
                raw = str(data[spec.key]).encode()
            elif spec.key in binary:
                raw = base64.b64decode(binary[spec.key])
            else:
                raise SourceError(f"configmap {spec.name} has no key {spec.key} (for {spec.path})")
        else:
            sdata = obj.get("data") or {}
            if spec.key not in sdata:
                raise SourceError(f"secret {spec.name} has no key {spec.key} (for {spec.path})")
            raw = base64.b64decode(sdata[spec.key])
        out.append(
            ExpectedFile(
                path=spec.path,
                sha256=hashlib.sha256(raw).hexdigest(),
                origin=f"{spec.source} {spec.name}/{spec.key}",
                secret=spec.source == "secret",
            )
        )
        del raw
    return Expectations(env=tuple(env), files=tuple(out))


def resolve_http(run: Run) -> tuple[HttpExpectation, ...]:
    """HTTP checks with `equals-configmap` replaced by the ConfigMap key's live value."""
    out: list[HttpExpectation] = []
    for check in run.plan.expect_http:
        if not check.equals_configmap:
            out.append(check)
            continue
        name, _, key = check.equals_configmap.partition("/")
        obj = _get_source(run, "configmap", name)
        data = (obj or {}).get("data") or {}
        if obj is None or key not in data:
            what = f"configmap {name}" if obj is None else f"configmap {name} has no key {key}: it"
            raise SourceError(f"{what} (for the HTTP check {check.label}) does not exist in {run.namespace}")
        out.append(
            dataclasses.replace(
                check,
                equals=json.dumps(str(data[key])),
                equals_configmap="",
                origin=f"configmap {name}/{key}",
            )
        )
    return tuple(out)


def selector_string(obj: dict[str, Any]) -> str:
    """The workload's `spec.selector` as a label selector string (matchLabels and matchExpressions)."""
    sel = obj.get("spec", {}).get("selector") or {}
    terms = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            terms.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            terms.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            terms.append(key)
        elif op == "DoesNotExist":
            terms.append(f"!{key}")
    return ",".join(terms)


def container_expectations(run: Run, obj: dict[str, Any]) -> dict[str, Expectations]:
    """Per container: the explicit expectations, merged over what the pod template implies."""
    plan = run.plan
    explicit = resolve_expectations(run, env=plan.expect_env, files=plan.expect_file)
    pod_spec = obj.get("spec", {}).get("template", {}).get("spec", {})
    names = [
        c["name"]
        for c in pod_spec.get("containers") or []
        if not plan.containers or c["name"] in plan.containers
    ]
    if not plan.from_spec:
        return {n: mark_secret_files(expectations=explicit, pod_spec=pod_spec, container=n) for n in names}
    objects: dict[Ref, dict[str, Any] | None] = {}
    for kind, name in sorted(referenced_objects(pod_spec=pod_spec)):
        objects[(kind, name)] = _get_source(run, kind, name)
    derived = derive(
        pod_spec=pod_spec, containers=names, objects=objects, hmac_key=run.shared.inspector.run_key.key
    )
    return {
        n: mark_secret_files(
            expectations=derived.get(n, Expectations()).merged(explicit), pod_spec=pod_spec, container=n
        )
        for n in names
    }


def _graceable(verdict: AttemptVerdict, expectations: dict[str, Expectations]) -> set[tuple[str, str]] | None:
    """(pod, container) pairs whose only failures may heal by waiting (a mutable configMap/secret
    volume not yet refreshed); None when anything else failed, since then waiting is pointless."""
    if verdict.problems or verdict.permanent_problems:
        return None
    out: set[tuple[str, str]] = set()
    for pod in verdict.pods:
        if pod.error is not None or any(c.status is not CheckStatus.OK for c in pod.checks):
            return None
        for c in pod.containers:
            if c.error is not None:
                return None
            files = {f.path: f for f in expectations.get(c.name, Expectations()).files}
            for check in c.checks:
                if check.status is CheckStatus.OK:
                    continue
                f = files.get(check.target) if check.type == "file" else None
                if f is None or not f.volume or f.subpath or (f.source is not None and f.source.immutable):
                    return None
                out.add((pod.name, c.name))
    return out


def select_pods(run: Run, obj: dict[str, Any]) -> PodSelection:
    """One list of pods (and of ReplicaSets or ControllerRevisions) per workload, never per pod."""
    ns, api, kind = run.namespace, run.api, run.plan.ref.kind
    sel = selector_string(obj)
    template = [
        c["name"] for c in obj.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    ]
    # by default the template's containers: webhook-injected sidecars (mesh proxies) are not ours
    containers = run.plan.containers or tuple(template)
    # the revision's owner first (ReplicaSets or ControllerRevisions), then its pods: a pod
    # created in between belongs to a revision already listed
    if kind == "statefulset":
        pods = api.get(f"/api/v1/namespaces/{ns}/pods", labelSelector=sel)["items"]
        return select_statefulset_pods(statefulset=obj, pods=pods, containers=containers)
    if kind == "daemonset":
        revisions = api.get(f"/apis/apps/v1/namespaces/{ns}/controllerrevisions", labelSelector=sel)["items"]
        pods = api.get(f"/api/v1/namespaces/{ns}/pods", labelSelector=sel)["items"]
        return select_daemonset_pods(daemonset=obj, revisions=revisions, pods=pods, containers=containers)
    rss = api.get(f"/apis/apps/v1/namespaces/{ns}/replicasets", labelSelector=sel)["items"]
    pods = api.get(f"/api/v1/namespaces/{ns}/pods", labelSelector=sel)["items"]
    return select_current_pods(deployment=obj, replicasets=rss, pods=pods, containers=containers)


def attempt(run: Run, obj: dict[str, Any]) -> AttemptVerdict:
    """One pass over the pods of the current revision: one exec per container, one request per
    HTTP check and pod."""
    ns, api = run.namespace, run.api
    shared = run.shared
    run.objects.clear()
    selection = select_pods(run, obj)
    expectations = container_expectations(run, obj)
    http = resolve_http(run)
    run.log(f"{run.label}: inspecting {len(selection.pods)} pods of revision {selection.revision}")

    def expect(container: str) -> Expectations:
        return expectations.get(container, Expectations())

    with ThreadPoolExecutor(max_workers=1) as side:
        answers = side.submit(lambda: shared.prober.check(namespace=ns, pods=selection.pods, checks=http))
        observations = shared.inspector.inspect(namespace=ns, pods=selection.pods, expectations_for=expect)
        by_pod = answers.result()
    observations = [dataclasses.replace(o, http=by_pod.get(o.pod.name, ())) for o in observations]

    def judge(obs: list[PodObservation]) -> AttemptVerdict:
        return judge_attempt(
            selection_revision=selection.revision,
            observations=obs,
            expectations=expectations,
            problems=selection.problems,
            permanent_problems=selection.permanent_problems,
        )

    verdict = judge(observations)
    pending = _graceable(verdict, expectations)
    grace = shared.settings.volume_grace
    if pending:
        grace_end = time.monotonic() + min(grace, api.deadline.remaining())
        run.log(f"{run.label}: {len(pending)} containers wait for a volume refresh (up to {grace:g}s)")
        while pending and time.monotonic() < grace_end:
            waiting = frozenset(pending)
            time.sleep(min(GRACE_POLL, max(0.0, grace_end - time.monotonic())))
            fresh = shared.inspector.inspect(
                namespace=ns, pods=selection.pods, expectations_for=expect, only=waiting.__contains__
            )
            observations = _replace(observations, fresh)
            verdict = judge(observations)
            pending = _graceable(verdict, expectations) or set()
    if verdict.ok:
        return verdict
    return dataclasses.replace(
        verdict, diagnosis=tuple(diagnose(workload=run.label, verdict=verdict, expectations=expectations))
    )


def _replace(old: list[PodObservation], fresh: list[PodObservation]) -> list[PodObservation]:
    """Swap re-checked containers' observations into the earlier pass."""
    by_pod = {o.pod.name: {c.container: c for c in o.containers} for o in fresh}
    out = []
    for o in old:
        new = by_pod.get(o.pod.name)
        if new is None:
            out.append(o)
            continue
        out.append(dataclasses.replace(o, containers=tuple(new.get(c.container, c) for c in o.containers)))
    return out


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


RESTART_CONFLICTS = 5  # a workload's resourceVersion moves with every status write


def restart(run: Run, obj: dict[str, Any]) -> None:
    """What `kubectl rollout restart` sends, plus a record of it on the workload so a retried
    job verifying the same revision does not restart it again; refuses a second call.

    The patch carries the workload's resourceVersion: if anything changed it meanwhile (another
    run restarting it too), the API server answers 409 and the record is read again first."""
    if run.restart_sent:
        raise RuntimeError("a restart was already issued in this run")
    ref = run.plan.ref
    if obj.get("spec", {}).get("paused"):
        raise kube.KubeError(
            f"deployments.apps/{ref.name} can't restart paused deployment (run rollout resume first)",
            status=409,
        )
    run.restart_sent = True
    path = api_path(kind=ref.kind, namespace=run.namespace, name=ref.name)
    inspected_generation = (obj.get("metadata") or {}).get("generation")
    # which run wrote a record: a retried patch whose first answer was lost meets its own
    mine = secrets.token_hex(4)

    def count() -> None:
        run.restarts += 1
        run.attempts_at_restart = len(run.attempts)

    for _ in range(RESTART_CONFLICTS):
        now = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
        template = json.loads(json.dumps(obj.get("spec", {}).get("template") or {}))
        template.setdefault("metadata", {}).setdefault("annotations", {})[RESTARTED_AT] = now
        body = {
            "metadata": {
                "resourceVersion": (obj.get("metadata") or {}).get("resourceVersion", ""),
                "annotations": {
                    RESTART_RECORD: f"{restart_key(template=template, sources=_source_versions(run))}.{mine}",
                    RESTART_RECORD_AT: now,
                },
            },
            "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}},
        }
        try:
            run.api.patch(path, body, "application/strategic-merge-patch+json")
        except kube.KubeError as e:
            if e.status >= 500 or e.status == 0:
                count()  # it may have been applied before the server failed to answer
                raise
            if e.status != 409:
                raise
            obj = run.api.get(path)
            if _record(obj)[1] == mine:
                # our own patch, applied, whose answer was lost; the retry met its own change.
                # Asked first: the stored template may differ from the one predicted here (a
                # mutating webhook, or a deploy landing right after), and this run's restart
                # was sent all the same
                count()
                run.log(f"{run.label}: restarted (once), waiting for the new rollout")
                return
            if _restarted_for_this(run, obj):
                run.prior_restart = _annotations(obj).get(RESTART_RECORD_AT, "") or "another run"
                run.log(
                    f"{run.label}: another run of rollout-verify restarted it meanwhile "
                    f"({run.prior_restart}); it will not be restarted again"
                )
                return
            if (obj.get("metadata") or {}).get("generation") != inspected_generation:
                # a new deploy landed while the old revision was inspected: restarting would act
                # on a verdict about pods that are going away; nothing was sent, so the one
                # restart stays available for the new revision
                run.restart_sent = False
                run.log(
                    f"{run.label}: changed to a new revision while it was inspected; "
                    "inspecting that one instead of restarting"
                )
                return
            continue
        count()
        run.log(f"{run.label}: restarted (once), waiting for the new rollout")
        return
    raise kube.KubeError(
        f"{ref.kind} {ref.name} kept changing while the restart was sent "
        f"({RESTART_CONFLICTS} conflicts); not restarted",
        status=409,
    )


def _record(obj: dict[str, Any]) -> tuple[str, str]:
    """The restart record `KEY.WRITER`: the restarted revision's key and the run that wrote it."""
    key, _, writer = _annotations(obj).get(RESTART_RECORD, "").partition(".")
    return key, writer


def _restarted_for_this(run: Run, obj: dict[str, Any]) -> bool:
    """Does the workload's restart record name its current template and sources?"""
    record = _record(obj)[0]
    return bool(record) and record == restart_key(
        template=obj.get("spec", {}).get("template") or {}, sources=_source_versions(run)
    )


def _rollout_failure(run: Run, exc: RolloutNotComplete) -> str:
    reasons: list[str] = []
    try:
        pods = run.api.get(
            f"/api/v1/namespaces/{run.namespace}/pods", labelSelector=selector_string(exc.workload)
        )["items"]
        reasons = waiting_reasons(pods=pods)
    except kube.KubeError:
        pass
    msg = exc.message
    if reasons:
        msg += "; " + "; ".join(reasons[:10])
    return msg


def verify_workload(
    *, shared: Shared, plan: TargetPlan, namespace: str, label: str, log: Log
) -> WorkloadResult:
    """Wait, inspect, restart at most once, inspect again: one workload's whole verdict."""
    run = Run(shared=shared, plan=plan, namespace=namespace, label=label, log=log)
    ref, api = plan.ref, shared.api

    def result(
        kind: Literal["passed", "failed", "error"], code: int, message: str, error: str | None = None
    ) -> WorkloadResult:
        return WorkloadResult(
            kind=ref.kind,
            namespace=namespace,
            name=ref.name,
            attempts=tuple(run.attempts),
            restarted=run.restarts > 0,
            error=error,
            # an error after the restart and before any attempt of the new pods: the last attempt
            # judged pods the restart replaced
            superseded=error is not None
            and run.restarts > 0
            and len(run.attempts) == run.attempts_at_restart,
            result=kind,
            exit_code=code,
            message=message,
            prior_restart=run.prior_restart,
        )

    try:
        while True:
            if not run.attempts:  # later waits are announced by the restart or re-check line
                log(f"{label}: waiting for the rollout in namespace {namespace}")
            obj = wait_for_rollout(api=api, namespace=namespace, name=ref.name, kind=ref.kind)
            verdict = attempt(run, obj)
            if not run.attempts and not run.restart_sent and _restarted_for_this(run, obj):
                run.prior_restart = _annotations(obj).get(RESTART_RECORD_AT, "") or "an earlier run"
                log(
                    f"{label}: an earlier run of rollout-verify already restarted this revision "
                    f"({run.prior_restart}); it will not be restarted again"
                )
            run.attempts.append(verdict)
            done = 1 if run.restart_sent or run.prior_restart else 0
            decision = decide(
                verdict=verdict, restarts_done=done, restart_mode=plan.restart, rechecks_done=run.rechecks
            )
            if decision.action == "pass":
                return result("passed", EXIT_OK, decision.reason)
            if decision.action == "fail":
                return result("failed", EXIT_FAILED, decision.reason)
            seen = WorkloadResult(
                kind=ref.kind, namespace=namespace, name=ref.name, attempts=(verdict,), restarted=False
            )
            for line in problem_lines(workload=seen):
                log(line)
            log(f"{label}: {decision.reason}")
            if decision.action == "recheck":
                run.rechecks += 1
                continue
            if api.deadline.expired:
                # no time left to see a new rollout through: restarting now would change the
                # cluster for nothing
                raise RolloutNotComplete(f"--timeout ran out before the restart ({decision.reason})", obj)
            restart(run, obj)
    except RolloutNotComplete as e:
        msg = _rollout_failure(run, e)
        return result("error", EXIT_ROLLOUT, msg, error=f"rollout did not complete: {msg}")
    except SourceError as e:
        return result("error", EXIT_UNREADABLE, str(e), error=str(e))
    except kube.KubeError as e:
        if e.timed_out:
            return result("error", EXIT_ROLLOUT, str(e), error=str(e))
        msg = f"forbidden: {e}" if e.status == 403 else str(e)
        return result("error", EXIT_UNREADABLE, msg, error=msg)
    except Exception as e:
        # a bug must still end as a one-line verdict, with the restart (if any) counted
        msg = internal_error(e)
        log(msg)
        return result("error", EXIT_INTERNAL, msg, error=msg)


def _label(plan: TargetPlan, namespace: str, default: str) -> str:
    where = f"{namespace}/" if namespace != default else ""
    return f"{plan.ref.kind} {where}{plan.ref.name}"


def select_workloads(*, api: kube.Api, namespace: str, selector: str) -> list[WorkloadRef]:
    """Every Deployment, StatefulSet and DaemonSet with the labels: one list per kind."""
    found: list[WorkloadRef] = []
    for kind in KINDS:
        items = api.get(api_path(kind=kind, namespace=namespace), labelSelector=selector)["items"]
        found.extend(WorkloadRef(kind=kind, name=i["metadata"]["name"]) for i in items)
    return sorted(found, key=lambda r: (KINDS.index(r.kind), r.name))


def _plans(job: Job, api: kube.Api, namespace: str) -> list[TargetPlan]:
    plans = list(job.targets)
    s = job.settings
    if s.selector is not None:
        named = {(p.ref.kind, p.ref.name, p.namespace or namespace) for p in plans}
        matched = select_workloads(api=api, namespace=namespace, selector=s.selector)
        if not matched and not plans:
            kinds = ", ".join(PLURAL[k] for k in KINDS)
            raise kube.KubeError(
                f"--selector {s.selector} matches no {kinds} in namespace {namespace}", status=404
            )
        plans += [
            plan_target(settings=s, ref=ref)
            for ref in matched
            if (ref.kind, ref.name, namespace) not in named
        ]
    return plans


def execute(*, job: Job, connection: kube.Connection, logs: Logs) -> RunResult:
    """Verify every workload of the job; every outcome is a RunResult (the CLI maps it to an exit)."""
    settings = job.settings
    deadline = retry.Deadline(settings.timeout)
    default_ns = settings.namespace or connection.namespace
    api = kube.Api(connection, deadline)
    # --concurrency is one budget: execs and HTTP checks (which run side by side) draw from it
    slots = threading.BoundedSemaphore(settings.concurrency)
    shared = Shared(
        settings=settings,
        api=api,
        inspector=Inspector(
            configuration=connection.configuration,
            exec_timeout=settings.exec_timeout,
            concurrency=settings.concurrency,
            deadline=deadline,
            api=api,
            token=connection.token,
            slots=slots,
        ),
        prober=Prober(
            connection=connection,
            timeout=settings.exec_timeout,
            concurrency=settings.concurrency,
            deadline=deadline,
            api=api,
            slots=slots,
        ),
    )
    try:
        plans = _plans(job, api, default_ns)
    except kube.KubeError as e:
        msg = f"forbidden: {e}" if e.status == 403 else str(e)
        logs.run(msg)
        return RunResult(
            result="error",
            exit_code=EXIT_ROLLOUT if e.timed_out else EXIT_UNREADABLE,
            restarted=False,
            workloads=(),
            message=msg,
        )
    work = [(p, p.namespace or default_ns) for p in plans]
    seen: set[tuple[str, str, str]] = set()
    for p, ns in work:
        if (p.ref.kind, p.ref.name, ns) in seen:
            # one workload twice would get two restarts: refuse before anything is sent
            msg = (
                f"--config: {p.ref} in namespace {ns} is named twice (with and without its "
                "namespace); name it once (VERIFY_CONFIG)"
            )
            logs.run(f"error: {msg}")
            return RunResult(
                result="error", exit_code=EXIT_CONFIG, restarted=False, workloads=(), message=msg
            )
        seen.add((p.ref.kind, p.ref.name, ns))
    labels = [_label(p, ns, default_ns) for p, ns in work]
    logs.begin(labels)

    def one(index: int) -> WorkloadResult:
        plan, ns = work[index]
        label = labels[index]
        try:
            return verify_workload(
                shared=shared, plan=plan, namespace=ns, label=label, log=logs.workload(label)
            )
        finally:
            logs.end(label)

    if len(work) == 1:
        results = [one(0)]
    else:
        pool = ThreadPoolExecutor(max_workers=min(len(work), MAX_PARALLEL_WORKLOADS))
        try:
            results = list(pool.map(one, range(len(work))))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    return combine(workloads=tuple(results))


def internal_error(exc: BaseException) -> str:
    """Name the exception type and where it was raised, never its message (it could quote data)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"internal error {type(exc).__name__}{where}: a bug in rollout-verify, please report it"
