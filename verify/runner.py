"""The job itself: wait, select, inspect, judge, restart at most once, inspect again."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from verify import kube, retry
from verify.config import Settings
from verify.diagnosis import diagnose
from verify.inspect import Inspector
from verify.judge import judge_attempt
from verify.model import (
    AttemptVerdict,
    CheckStatus,
    Expectations,
    ExpectedFile,
    FileSpec,
    PodObservation,
)
from verify.policy import decide
from verify.report import RunResult, WorkloadResult, problem_lines
from verify.rollout import select_current_pods, waiting_reasons
from verify.spec import Ref, derive, mark_secret_files, referenced_objects
from verify.watcher import RolloutNotComplete, deployment_path, wait_for_rollout

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_UNREADABLE, EXIT_ROLLOUT, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
GRACE_POLL = 2.0  # seconds between re-checks of a volume awaiting the kubelet's refresh

Log = Callable[[str], None]


class SourceError(Exception):
    """An expected file's source object or key does not exist: the expectation cannot be read."""


@dataclass
class Run:
    """Mutable state of one run; `restarts` is checked before any patch is sent."""

    settings: Settings
    namespace: str
    api: kube.Api
    inspector: Inspector
    log: Log
    restarts: int = 0
    attempts: list[AttemptVerdict] = field(default_factory=list)


def resolve_expectations(
    *, api: kube.Api, namespace: str, env: list[str], files: list[FileSpec]
) -> Expectations:
    """Expected digests, read from the live ConfigMaps/Secrets; Secret values are hashed at once."""
    out: list[ExpectedFile] = []
    cache: dict[tuple[str, str], dict[str, Any]] = {}
    for spec in files:
        if spec.source == "sha256":
            out.append(ExpectedFile(path=spec.path, sha256=spec.digest.lower(), origin="sha256"))
            continue
        plural = "configmaps" if spec.source == "configmap" else "secrets"
        key = (plural, spec.name)
        if key not in cache:
            try:
                cache[key] = api.get(f"/api/v1/namespaces/{namespace}/{plural}/{spec.name}")
            except kube.KubeError as e:
                if e.status == 404:
                    raise SourceError(
                        f"{spec.source} {spec.name} (for {spec.path}) does not exist in namespace {namespace}"
                    ) from None
                raise
        obj = cache[key]
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


def _selector(dep: dict[str, Any]) -> str:
    ml = (dep.get("spec", {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(ml.items()))


def uses_spec(settings: Settings) -> bool:
    """--from-spec is the default when no explicit expectation is given."""
    if settings.from_spec is not None:
        return settings.from_spec
    return not (settings.expect_env or settings.expect_file)


def container_expectations(run: Run, dep: dict[str, Any]) -> dict[str, Expectations]:
    """Per container: the explicit expectations, merged over what the pod template implies."""
    s, ns, api = run.settings, run.namespace, run.api
    explicit = resolve_expectations(api=api, namespace=ns, env=list(s.expect_env), files=list(s.expect_file))
    pod_spec = dep.get("spec", {}).get("template", {}).get("spec", {})
    names = [
        c["name"] for c in pod_spec.get("containers") or [] if not s.containers or c["name"] in s.containers
    ]
    if not uses_spec(s):
        return {n: mark_secret_files(expectations=explicit, pod_spec=pod_spec, container=n) for n in names}
    objects: dict[Ref, dict[str, Any] | None] = {}
    for kind, name in sorted(referenced_objects(pod_spec=pod_spec)):
        plural = "configmaps" if kind == "configmap" else "secrets"
        try:
            objects[(kind, name)] = api.get(f"/api/v1/namespaces/{ns}/{plural}/{name}")
        except kube.KubeError as e:
            if e.status != 404:
                raise
            objects[(kind, name)] = None
    derived = derive(pod_spec=pod_spec, containers=names, objects=objects, hmac_key=run.inspector.run_key.key)
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
        if pod.error is not None:
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


def attempt(run: Run, dep: dict[str, Any]) -> AttemptVerdict:
    """One pass over the pods of the current revision: one list each, one exec per container."""
    s, ns, api = run.settings, run.namespace, run.api
    sel = _selector(dep)
    rss = api.get(f"/apis/apps/v1/namespaces/{ns}/replicasets", labelSelector=sel)["items"]
    pods = api.get(f"/api/v1/namespaces/{ns}/pods", labelSelector=sel)["items"]
    # by default the template's containers: webhook-injected sidecars (mesh proxies) are not ours
    template = [
        c["name"] for c in dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    ]
    selection = select_current_pods(
        deployment=dep, replicasets=rss, pods=pods, containers=s.containers or template
    )
    expectations = container_expectations(run, dep)
    run.log(
        f"deployment {s.deployment}: inspecting {len(selection.pods)} pods of revision {selection.revision}"
    )

    def expect(container: str) -> Expectations:
        return expectations.get(container, Expectations())

    observations = run.inspector.inspect(namespace=ns, pods=selection.pods, expectations_for=expect)

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
    if pending:
        grace_end = time.monotonic() + min(s.volume_grace, api.deadline.remaining())
        run.log(
            f"deployment {s.deployment}: {len(pending)} containers wait for a volume refresh "
            f"(up to {s.volume_grace:g}s)"
        )
        while pending and time.monotonic() < grace_end:
            waiting = frozenset(pending)
            time.sleep(min(GRACE_POLL, max(0.0, grace_end - time.monotonic())))
            fresh = run.inspector.inspect(
                namespace=ns,
                pods=selection.pods,
                expectations_for=expect,
                only=waiting.__contains__,
            )
            observations = _replace(observations, fresh)
            verdict = judge(observations)
            pending = _graceable(verdict, expectations) or set()
    if verdict.ok:
        return verdict
    return dataclasses.replace(
        verdict,
        diagnosis=tuple(
            diagnose(workload=f"deployment {s.deployment}", verdict=verdict, expectations=expectations)
        ),
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


def restart(run: Run, dep: dict[str, Any]) -> None:
    """Exactly what `kubectl rollout restart` sends; refuses a second call."""
    if run.restarts >= 1:
        raise RuntimeError("a restart was already issued in this run")
    name = run.settings.deployment
    if dep.get("spec", {}).get("paused"):
        raise kube.KubeError(
            f"deployments.apps/{name} can't restart paused deployment (run rollout resume first)",
            status=409,
        )
    run.restarts += 1
    now = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    body = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}}
    run.api.patch(deployment_path(run.namespace, name), body, "application/strategic-merge-patch+json")
    run.log(f"deployment {name}: restarted (once), waiting for the new rollout")


def _rollout_failure(run: Run, exc: RolloutNotComplete) -> str:
    reasons: list[str] = []
    try:
        pods = run.api.get(
            f"/api/v1/namespaces/{run.namespace}/pods", labelSelector=_selector(exc.deployment)
        )["items"]
        reasons = waiting_reasons(pods=pods)
    except kube.KubeError:
        pass
    msg = exc.message
    if reasons:
        msg += "; " + "; ".join(reasons[:10])
    return msg


def execute(*, settings: Settings, connection: kube.Connection, log: Log) -> RunResult:
    """Run the whole verification; every outcome is a RunResult (the CLI maps it to an exit)."""
    deadline = retry.Deadline(settings.timeout)
    ns = settings.namespace or connection.namespace
    api = kube.Api(connection, deadline)
    inspector = Inspector(
        configuration=connection.configuration,
        exec_timeout=settings.exec_timeout,
        concurrency=settings.concurrency,
        deadline=deadline,
        api=api,
    )
    run = Run(settings=settings, namespace=ns, api=api, inspector=inspector, log=log)

    def result(
        kind: Literal["passed", "failed", "error"], code: int, message: str, error: str | None = None
    ) -> RunResult:
        wl = WorkloadResult(
            kind="deployment",
            namespace=ns,
            name=settings.deployment,
            attempts=tuple(run.attempts),
            restarted=run.restarts > 0,
            error=error,
            superseded=error is not None and run.restarts >= len(run.attempts) > 0,
        )
        return RunResult(
            result=kind,
            exit_code=code,
            restarted=run.restarts > 0,
            workloads=(wl,),
            message=message,
        )

    try:
        while True:
            log(f"deployment {settings.deployment}: waiting for the rollout in namespace {ns}")
            dep = wait_for_rollout(api=api, namespace=ns, name=settings.deployment)
            verdict = attempt(run, dep)
            run.attempts.append(verdict)
            decision = decide(verdict=verdict, restarts_done=run.restarts, restart_mode=settings.restart)
            if decision.action == "pass":
                return result("passed", EXIT_OK, decision.reason)
            if decision.action == "fail":
                return result("failed", EXIT_FAILED, decision.reason)
            seen = WorkloadResult(
                kind="deployment",
                namespace=ns,
                name=settings.deployment,
                attempts=(verdict,),
                restarted=False,
            )
            for line in problem_lines(workload=seen):
                log(line)
            log(f"deployment {settings.deployment}: {decision.reason}")
            if api.deadline.expired:
                # no time left to see a new rollout through: restarting now would change the
                # cluster for nothing
                raise RolloutNotComplete(f"--timeout ran out before the restart ({decision.reason})", dep)
            restart(run, dep)
    except RolloutNotComplete as e:
        msg = _rollout_failure(run, e)
        return result("error", EXIT_ROLLOUT, msg, error=f"rollout did not complete: {msg}")
    except SourceError as e:
        return result("error", EXIT_UNREADABLE, str(e), error=str(e))
    except kube.KubeError as e:
        msg = f"forbidden: {e}" if e.status == 403 else str(e)
        return result("error", EXIT_UNREADABLE, msg, error=msg)
    except Exception as e:
        # a bug must still end as a one-line verdict, with the restart (if any) counted
        msg = internal_error(e)
        log(msg)
        return result("error", EXIT_INTERNAL, msg, error=msg)


def internal_error(exc: Exception) -> str:
    """Name the exception type and where it was raised, never its message (it could quote data)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"internal error {type(exc).__name__}{where}: a bug in rollout-verify, please report it"
