"""The run: one deadline, one client and one exec budget for every workload the job names (and
its --selector finds), each verified in parallel with its own verdict and its own restart."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from verify import errors
from verify.config.job import Job, TargetPlan, plan_target
from verify.config.naming import FLAG_CUTOFF, did_you_mean
from verify.config.settings import Settings
from verify.exitcodes import ExitCode
from verify.flow import analysis_run
from verify.flow.permissions import needed, reads_template
from verify.flow.progress import Progress
from verify.flow.workload_ref import resolved
from verify.kube import objects, retry
from verify.kube.access import Rule, denied, whoami
from verify.kube.api import Api
from verify.kube.cancel import Cancel
from verify.kube.connection import Connection
from verify.kube.kinds import KINDS, PLURAL, api_path
from verify.model import Kind, WorkloadRef
from verify.report.result import RunResult, WorkloadResult, combine

if TYPE_CHECKING:
    from verify.flow.state import Log, RunContext

MAX_PARALLEL_WORKLOADS = 16


class Logs(Protocol):
    """Where progress lines go; the CLI groups them per workload on GitHub and GitLab."""

    def line(self, text: str) -> None: ...

    def begin(self, labels: Sequence[str]) -> None: ...

    def workload(self, label: str) -> Log: ...

    def end(self, label: str) -> None: ...


def _label(plan: TargetPlan, namespace: str, default: str) -> str:
    where = f"{namespace}/" if namespace != default else ""
    return f"{plan.ref.kind} {where}{plan.ref.name}"


def select_workloads(*, api: Api, namespace: str, selector: str) -> tuple[list[WorkloadRef], list[Kind]]:
    """Every Deployment, StatefulSet, DaemonSet and Rollout with the labels: one list per kind
    (no Rollouts where Argo Rollouts' CRDs are not installed); and the kinds looked for."""
    found: list[WorkloadRef] = []
    searched: list[Kind] = []
    for kind in KINDS:
        try:
            items = api.list(api_path(kind=kind, namespace=namespace), labelSelector=selector)
        except errors.NotFound:
            if kind != "rollout":
                raise
            continue
        searched.append(kind)
        found.extend(WorkloadRef(kind=kind, name=i["metadata"]["name"]) for i in items)
    return sorted(found, key=lambda r: (KINDS.index(r.kind), r.name)), searched


def _plans(job: Job, api: Api, namespace: str) -> list[TargetPlan]:
    plans = list(job.targets)
    s = job.settings
    if s.selector is not None:
        named = {(p.ref.kind, p.ref.name, p.namespace or namespace) for p in plans}
        matched, searched = select_workloads(api=api, namespace=namespace, selector=s.selector)
        if not matched and not plans:
            kinds = ", ".join(PLURAL[k] for k in searched)
            raise errors.NoWorkloadsMatched(
                f"--selector {s.selector} matches no {kinds} in namespace {namespace}"
            )
        plans += [
            plan_target(settings=s, ref=ref)
            for ref in matched
            if (ref.kind, ref.name, namespace) not in named
        ]
    return plans


Templates = dict[tuple[str, str, str], dict[str, Any] | None]


def _templates(api: Api, work: list[tuple[TargetPlan, str]]) -> Templates:
    """The workloads whose template the checks before waiting read (the sources --from-spec
    needs, the containers --container names), each read once; None for one that is not there:
    its own verdict says so ("deployment nope: ... not found") and the others still run."""
    out: Templates = {}
    for plan, ns in work:
        if reads_template(plan) or plan.containers:
            try:
                workload = api.get(api_path(kind=plan.ref.kind, namespace=ns, name=plan.ref.name))
                out[(plan.ref.kind, plan.ref.name, ns)] = resolved(
                    api, kind=plan.ref.kind, namespace=ns, workload=workload
                )
            except errors.NotFound:
                out[(plan.ref.kind, plan.ref.name, ns)] = None
    return out


def unknown_containers(*, plan: TargetPlan, workload: dict[str, Any], label: str) -> list[str]:
    """One line per --container the workload's pod template lacks, naming the ones it has and the
    likeliest meant (the rule for mistyped flags and variables): a typo would otherwise wait for
    the whole rollout and then fail every pod."""
    names = objects.container_names(objects.pod_spec(workload))
    lines = []
    for wanted in plan.containers:
        if wanted in names:
            continue
        meant = did_you_mean(wanted, names, cutoff=FLAG_CUTOFF)
        hint = f"; did you mean {meant}?" if meant else ""
        has = ", ".join(names) or "none"
        lines.append(
            f'--container: {label} has no container "{wanted}" in its pod template (it has: {has}){hint} '
            "(VERIFY_CONTAINERS)"
        )
    return lines


def _preflight(
    api: Api, work: list[tuple[TargetPlan, str]], templates: Templates, *, debug: bool = False
) -> str:
    """Before any wait: every permission the run will need, checked with SelfSubjectAccessReviews.
    Empty when all are granted (or the reviews are not available); else the one line that names
    every missing rule as `kubectl auth can-i` asks it, per namespace."""
    by_namespace: dict[str, list[Rule]] = {}
    for plan, ns in work:
        restart = plan.restart == "once"
        workload = templates.get((plan.ref.kind, plan.ref.name, ns)) if reads_template(plan) else None
        by_namespace.setdefault(ns, []).extend(
            needed(plan=plan, workload=workload, restart=restart, debug=debug)
        )
    lines, only_patches = [], True
    for ns, rules in by_namespace.items():
        missing = denied(api, namespace=ns, rules=rules)
        if missing:
            shown = ", ".join(f"`{r.phrase()}`" for r in missing)
            lines.append(f"in namespace {ns}: {shown}")
            # only the workloads' restart patches: --restart never does without them
            only_patches = only_patches and all(
                r.verb == "patch" and r.group in ("apps", "argoproj.io") for r in missing
            )
    if not lines:
        return ""
    who = whoami(api)
    fix = "grant them (examples/rbac.yaml, examples/rbac-workloads.yaml)"
    if only_patches:
        fix += " or pass --restart never"
    return (
        f"forbidden: {who or 'the credentials'} lack{'s' if who else ''} permissions the run needs "
        f"(checked before waiting), {'; '.join(lines)}; {fix}"
    )


def _failure(code: ExitCode, message: str) -> RunResult:
    return RunResult(result="error", exit_code=int(code), restarted=False, workloads=(), message=message)


def _context(
    *,
    settings: Settings,
    connection: Connection,
    api: Api,
    deadline: retry.Deadline,
    progress: Progress | None,
) -> RunContext:
    """What every workload shares: the client, one exec budget, the progress. Built (and its
    modules imported: the exec transport, the probes, the per-workload flow) once the run's
    first requests have gone out, so they are not start-up."""
    from verify.flow.probe.exec_probe import Inspector
    from verify.flow.probe.http_probe import Prober
    from verify.flow.state import RunContext
    from verify.kube.exec import Exec

    # --concurrency is one budget: execs and HTTP checks (which run side by side) draw from it
    slots = threading.BoundedSemaphore(settings.concurrency)
    return RunContext(
        settings=settings,
        api=api,
        inspector=Inspector(
            transport=Exec(transport=connection.transport, credentials=connection.credentials),
            exec_timeout=settings.exec_timeout,
            concurrency=settings.concurrency,
            deadline=deadline,
            api=api,
            slots=slots,
            debug_image=settings.debug_image,
            dry_run=settings.dry_run,
        ),
        prober=Prober(
            connection=connection,
            timeout=settings.exec_timeout,
            concurrency=settings.concurrency,
            deadline=deadline,
            api=api,
            slots=slots,
        ),
        progress=progress or Progress(),
    )


def execute(
    *,
    job: Job,
    connection: Connection,
    logs: Logs,
    cancel: Cancel | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Verify every workload of the job; every outcome is a RunResult (the CLI maps it to an exit)."""
    settings = job.settings
    deadline = retry.Deadline(settings.timeout, cancel=cancel, notice=logs.line)
    default_ns = settings.namespace or connection.namespace
    api = Api(connection, deadline)
    try:
        plans = _plans(job, api, default_ns)
    except errors.VerifyError as e:
        logs.line(e.verdict())
        return _failure(e.exit_code, e.verdict())
    run = ""
    if not connection.context and not settings.dry_run and any(p.restart == "once" for p in plans):
        # in-cluster, and something could be restarted: is this run an Argo analysis step?
        run = analysis_run.find(
            api=api, namespace=connection.namespace, pod_name=os.environ.get("HOSTNAME", "")
        )
        if run:  # nothing is restarted, so no patch permission is asked for either
            logs.line(analysis_run.notice(run))
            plans = [replace(p, restart="never") for p in plans]
    work = [(p, p.namespace or default_ns) for p in plans]
    seen: set[tuple[str, str, str]] = set()
    for p, ns in work:
        if (p.ref.kind, p.ref.name, ns) in seen:
            # one workload twice would get two restarts: refuse before anything is sent
            msg = (
                f"--config: {p.ref} in namespace {ns} is named twice (with and without its "
                "namespace); name it once (VERIFY_CONFIG)"
            )
            logs.line(f"error: {msg}")
            return _failure(ExitCode.CONFIG, msg)
        seen.add((p.ref.kind, p.ref.name, ns))
    labels = [_label(p, ns, default_ns) for p, ns in work]
    try:
        templates = _templates(api, work)
        if not settings.dry_run:  # a dry run sends no POST either (a review is one)
            missing = _preflight(api, work, templates, debug=settings.debug_image is not None)
            if missing:
                logs.line(missing)
                return _failure(ExitCode.UNREADABLE, missing)
    except errors.VerifyError as e:
        logs.line(e.verdict())
        return _failure(e.exit_code, e.verdict())
    typos = [
        line
        for (plan, ns), label in zip(work, labels, strict=True)
        if (workload := templates.get((plan.ref.kind, plan.ref.name, ns))) is not None
        for line in unknown_containers(plan=plan, workload=workload, label=label)
    ]
    if typos:
        for line in typos:
            logs.line(f"error: {line}")
        return _failure(ExitCode.CONFIG, "; ".join(typos))
    context = _context(
        settings=settings, connection=connection, api=api, deadline=deadline, progress=progress
    )
    context.analysis_run = run
    for (p, ns), label in zip(work, labels, strict=True):
        context.progress.add(label=label, kind=p.ref.kind, namespace=ns, name=p.ref.name)
    logs.begin(labels)

    from verify.flow.workload import verify_workload

    def one(index: int) -> WorkloadResult:
        plan, ns = work[index]
        label = labels[index]
        try:
            return verify_workload(
                context=context, plan=plan, namespace=ns, label=label, log=logs.workload(label)
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
    from verify.flow.probe.debugger import debug_lines

    debugger = context.inspector.debugger
    used = tuple(debugger.containers()) if debugger is not None else ()
    for line in debug_lines(used):
        logs.line(line)
    return replace(combine(workloads=tuple(results)), debug_containers=used)
