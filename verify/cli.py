"""Command line entry point: argv and env -> Job -> flow -> reports; the only place that exits.

After the run it hands one RunResult to every sink the settings and the environment ask for
(JSON, JUnit, Markdown, --output-dir, GitHub outputs and summary), so they cannot disagree.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from verify import __version__
from verify.config.flags import info_request
from verify.config.job import Job, load_job
from verify.config.naming import env_var
from verify.config.settings import Settings
from verify.errors import ConfigError, KubeConfigError, internal_error
from verify.exitcodes import ExitCode
from verify.flow.progress import Progress
from verify.kube import kubeconfig, loading
from verify.kube.cancel import Cancel, until_done_or_cancelled
from verify.kube.names import SERVICE_ACCOUNT_TOKEN
from verify.platforms import colour, container, github
from verify.platforms.delivery import deliver, deliver_documents
from verify.platforms.logs import Logs, Platform, stderr, stdout, stdout_table, stdout_verdict
from verify.redact import one_line, printable_line, shown_path
from verify.report.result import RunInfo, RunResult


def _mask_early(*, environ: Mapping[str, str]) -> None:
    """On GitHub, mask kubeconfig secrets before any other line could carry them."""
    data = environ.get(env_var("kubeconfig_data"), "")
    values = kubeconfig.mask_values(data=data) if data.strip() else []
    for line in github.mask_lines(values=values):
        stdout(line)


def _mask_kubeconfig_file(*, settings: Settings, environ: Mapping[str, str]) -> None:
    """Mask what `connect` will load (the same loading rules): every kubeconfig file of the chain,
    or, when none yields a config, the in-cluster token (a runner in a pod)."""
    files = loading.chain(explicit=settings.kubeconfig, environ=environ).files
    if files:
        paths, token = list(files), False
    elif settings.kubeconfig is None and settings.context is None and loading.in_cluster(environ):
        paths, token = [SERVICE_ACCOUNT_TOKEN], True
    else:
        return
    values: list[str] = []
    for path in paths:
        try:
            text = loading.read(path)
        except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
            continue  # `connect` reports an unreadable (or oversized) file
        values += [text.strip()] if token else kubeconfig.secret_values(text=text)
    for line in github.mask_lines(values=[v for v in values if v]):
        stdout(line)


GRACE_AFTER_SIGNAL = 1.5  # seconds the workloads get to stop after a signal before the run ends


def _config_failure(message: str) -> RunResult:
    return RunResult(
        result="error", exit_code=int(ExitCode.CONFIG), restarted=False, workloads=(), message=message
    )


def _server_version(connection: Any, *, left: float) -> str | None:
    """The API server's gitVersion (GET /version, public on every cluster), or None: it is for
    the report only, so one short try, no retries, and none past the run's --timeout (`left`)."""
    if left < 0.1:
        return None
    from verify.kube.transport import bounded

    try:
        with bounded(time.monotonic() + min(2.0, left)):
            answer = connection.http.get("/version", timeout=min(2.0, left))
        version = answer.json().get("gitVersion") if answer.status_code == 200 else None
    except Exception:
        return None
    return one_line(version)[:64] if isinstance(version, str) else None


def _verify(
    *,
    job: Job,
    kubeconfig_path: str | None,
    logs: Logs,
    cancel: Cancel,
    progress: Progress,
    environ: Mapping[str, str],
    about: dict[str, str | None],
    started: float,
) -> RunResult:
    # Heavy imports only once the arguments are known to be good (keeps --help and errors fast).
    from verify.flow.run import execute
    from verify.kube.connection import connect

    settings = job.settings
    try:
        connection = connect(
            environ=environ,
            timeout=settings.timeout,
            kubeconfig=kubeconfig_path,
            context=settings.context,
            concurrency=settings.concurrency,
        )
        _started()
        about["context"] = connection.context or None
    except KubeConfigError as e:
        message = one_line(str(e))
        if settings.kubeconfig_data is not None:
            # the content came in VERIFY_KUBECONFIG_DATA (written to a file for the loader)
            message = message.replace("--kubeconfig/--context:", f"{env_var('kubeconfig_data')}:", 1)
            message = message.replace("(VERIFY_KUBECONFIG,", f"({env_var('kubeconfig_data')},")
        stderr(f"rollout-verify: error: {message}")
        return _config_failure(message)
    try:
        result = execute(job=job, connection=connection, logs=logs, cancel=cancel, progress=progress)
        if (
            (settings.report_json or settings.output_dir)
            and not cancel.cancelled
            and result.exit_code != ExitCode.UNREADABLE
        ):
            # not asked of a server that was unreachable or not the API (exit 3); the time left is
            # counted from the run's start: earlier than the run's deadline began, so never past it
            left = settings.timeout - (time.monotonic() - started)
            about["server_version"] = _server_version(connection, left=left)
        return result
    finally:
        connection.close()


def _stop_plugins() -> None:
    """A credential plugin still running is killed with its process group (it has its own session,
    so the CI job's signal never reached it)."""
    plugins = sys.modules.get("verify.kube.plugins")  # only when one may have run
    if plugins is not None:
        plugins.stop_running()


def _cancelled(*, cancel: Cancel, partial: RunResult | None, progress: Progress) -> RunResult:
    """The run's result after SIGINT/SIGTERM: `error`, 128 + the signal, every workload (finished
    ones with their verdict, the others with what they were doing) and whether the one write had
    already gone out."""
    sigint = cancel.signal == signal.SIGINT
    code = ExitCode.INTERRUPTED if sigint else ExitCode.TERMINATED
    if partial is not None:
        workloads, unfinished = partial.workloads, list[str]()
    else:
        workloads, unfinished = progress.cancelled(code=int(code), restart_sent=bool(cancel.writes))
    sent = "a restart had already been sent before the signal" if cancel.writes else "no restart was sent"
    doing = f"{'; '.join(unfinished)}; " if unfinished else ""
    message = f"cancelled by {'SIGINT' if sigint else 'SIGTERM'}: {doing}{sent}"
    stderr(f"rollout-verify: {message}")
    return RunResult(
        result="error",
        exit_code=int(code),
        restarted=bool(cancel.writes) or any(w.restarted for w in workloads),
        workloads=workloads,
        message=message,
    )


def _info(*, started: float, wall: float, about: Mapping[str, str | None]) -> RunInfo:
    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    seconds = time.monotonic() - started
    return RunInfo(
        version=__version__,
        started=iso(wall),
        ended=iso(wall + seconds),
        duration=seconds,
        context=about.get("context"),
        server_version=about.get("server_version"),
    )


MERGE_USAGE = "rollout-verify report merge [LABEL=]REPORT.json ... [--summary PATH] [--junit PATH]"


def _merge_arguments(args: Sequence[str]) -> tuple[list[tuple[str, str | None]], dict[str, str]]:
    """(report path, label) pairs and {--summary/--junit: path}; ConfigError for anything else."""
    reports: list[tuple[str, str | None]] = []
    outputs: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        flag, eq, value = arg.partition("=")
        if flag in ("--summary", "--junit"):
            if not eq:
                value = rest.pop(0) if rest and not rest[0].startswith("--") else ""
            if not value:
                raise ConfigError(f"report merge: {flag} needs a PATH; usage: {MERGE_USAGE}", field="report")
            outputs[flag] = value
        elif arg.startswith("-"):
            raise ConfigError(
                f"report merge: {printable_line(arg)[:40]} is not one of its flags; usage: {MERGE_USAGE}",
                field="report",
            )
        else:  # LABEL=PATH names the report's cluster; a path with a slash before its = is a path
            label, eq, path = arg.partition("=")
            named = bool(eq and label and "/" not in label)
            if named and label in {seen for _, seen in reports}:
                raise ConfigError(
                    f"report merge: the label {printable_line(label)[:40]} names two reports; give each "
                    "cluster its own LABEL=",
                    field="report",
                )
            reports.append((path if named else arg, label if named else None))
    if not reports:
        raise ConfigError(f"report merge: name the reports to merge; usage: {MERGE_USAGE}", field="report")
    return reports, outputs


def _report(*, args: Sequence[str], environ: Mapping[str, str]) -> int:
    """`report merge`: a fleet's reports as one verdict, one summary and one JUnit file."""
    from verify.report import merge, schema  # XML and the merge only for this subcommand: start-up stays lean

    if args[0] != "merge" or any(a in ("-h", "--help") for a in args):  # report's help, not the run's
        sys.stdout.write(merge.help_text(usage=MERGE_USAGE, of_report=args[0] != "merge"))
        return int(ExitCode.OK)
    args = args[1:]
    try:
        reports, outputs = _merge_arguments(args)
        docs = []
        for path, label in reports:
            try:
                with open(path, "rb") as fh:
                    data = fh.read(schema.MAX_BYTES + 1)
            except OSError as e:
                raise ConfigError(
                    f"report merge: cannot read {shown_path(path)} ({e.strerror or e}); "
                    "pass the files --report-json wrote",
                    field="report",
                ) from None
            try:
                docs.append((path, label, schema.parse(data)))
            except schema.Invalid as e:
                raise merge.refused(source=path, why=e) from None
        fleet = merge.merge(reports=docs)
    except ConfigError as e:
        stderr(f"rollout-verify: error: {e}")
        return int(ExitCode.CONFIG)
    for m in fleet.members:  # problems on stderr, the verdict alone on stdout, as a run's
        for problem in m.problems:
            stderr(f"rollout-verify: {m.cluster}: {m.where}: {problem}")
    stdout(merge.verdict_line(fleet=fleet))
    summary = merge.markdown(fleet=fleet)
    documents = {"--summary": (outputs["--summary"], summary)} if "--summary" in outputs else {}
    if "--junit" in outputs:
        documents["--junit"] = (outputs["--junit"], merge.junit(fleet=fleet))
    deliver_documents(documents=documents, summary=summary, environ=environ)
    return fleet.exit_code


def run(*, argv: Sequence[str], environ: Mapping[str, str], cancel: Cancel | None = None) -> int:
    if argv[:1] == ["report"] and argv[1:2] in (["merge"], ["--help"], ["-h"]):  # deploy/report: a Deployment
        return _report(args=argv[1:], environ=environ)
    if len(argv) > 1 and argv[0] == "report" and not argv[1].startswith("-"):
        # `report mrge x.json` would otherwise verify Deployments named report, mrge and x.json
        stderr(
            f"rollout-verify: error: report: {printable_line(argv[1])[:40]} is no subcommand; did you mean "
            "`report merge`? (a Deployment named report is deploy/report)"
        )
        return int(ExitCode.CONFIG)
    started, wall = time.monotonic(), time.time()
    about: dict[str, str | None] = {}
    cancel = cancel or Cancel()
    platform = Platform.of(environ)
    if platform.github:
        _mask_early(environ=environ)
    try:
        asked = info_request(list(argv))
        if asked is not None:  # --help, --version
            sys.stdout.write(asked if asked.endswith("\n") else asked + "\n")
            return int(ExitCode.OK)
        if container.active(environ):  # a GitHub container action: runner paths as mounted here
            environ = container.translated_environ(environ)
        job = load_job(argv=argv, environ=environ)
    except ConfigError as e:
        for line in e.lines:
            stderr(f"rollout-verify: error: {line}")
        result = _config_failure(str(e))
        if platform.github:
            for line in e.lines:
                stdout(github.command("error", line, title="rollout-verify"))
        deliver(
            result=result, settings=None, environ=environ, info=_info(started=started, wall=wall, about=about)
        )
        return result.exit_code
    settings = job.settings
    if platform.github and settings.kubeconfig_data is None:
        _mask_kubeconfig_file(settings=settings, environ=environ)
    with ExitStack() as stack:
        path = settings.kubeconfig
        failed: RunResult | None = None
        if settings.kubeconfig_data is not None:
            try:
                text = kubeconfig.decode(data=settings.kubeconfig_data.get_secret_value())
                path = stack.enter_context(kubeconfig.materialized(text=text))
            except kubeconfig.KubeconfigDataError as e:
                message = f"{env_var('kubeconfig_data')}: {e}"
                stderr(f"rollout-verify: error: {message}")
                failed = _config_failure(message)
        logs = Logs(platform, cancel=cancel)
        progress = Progress()
        outcome = failed
        if outcome is None and not cancel.cancelled:
            outcome = until_done_or_cancelled(
                lambda: _verify(
                    job=job,
                    kubeconfig_path=path,
                    logs=logs,
                    cancel=cancel,
                    progress=progress,
                    environ=environ,
                    about=about,
                    started=started,
                ),
                cancel=cancel,
                grace=GRACE_AFTER_SIGNAL,
                on_cancel=_stop_plugins,
            )
        if cancel.cancelled or outcome is None:
            outcome = _cancelled(cancel=cancel, partial=outcome, progress=progress)
        result = outcome
    paint = colour.Painter(on=colour.wanted(mode=settings.color, environ=environ, stream=sys.stdout))
    _ending(result=result, platform=platform, paint=paint)
    deliver(
        result=result, settings=settings, environ=environ, info=_info(started=started, wall=wall, about=about)
    )
    return result.exit_code


def _ending(*, result: RunResult, platform: Platform, paint: colour.Painter) -> None:
    """Each problem once, on stderr with the one prefix; stdout gets only what a reader of the
    job's end wants: the table of workloads and the verdict (and GitHub's annotations)."""
    from verify.report import table, text  # at the end: not start-up

    for wl in result.workloads:
        if wl.verdict_attempt is None:
            continue  # its one problem (the error) is the verdict line's own words: said once
        for line in text.problem_lines(workload=wl):
            stderr(f"rollout-verify: {line}")
    if platform.github:
        for line in github.error_lines(run=result):
            stdout(line)
    if result.workloads:
        stdout_table(table.rows(run=result), paint=paint)
        stdout_verdict(text.verdict_line(run=result), result=result.result, paint=paint)


def _started() -> None:
    """Start-up is over: what it built (modules, the settings' schemas, the client) lives until
    exit, so it is frozen out of every later collection and collecting resumes."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    # Start-up allocates for ~0.2 s, objects that all live for the whole run; collecting
    # meanwhile finds nothing and costs ~30 ms. `_started` turns collecting back on.
    gc.disable()
    cancel = Cancel()
    # SIGTERM (a cancelled CI job) and Ctrl-C stop the run the same way: no write after the signal,
    # every requested output written, the temp kubeconfig removed
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda received, _frame: cancel.cancel(received))
    try:
        code = run(argv=list(sys.argv[1:] if argv is None else argv), environ=os.environ, cancel=cancel)
    except Exception as e:  # a bug must still end as one line (type and place, never the message)
        stderr(f"rollout-verify: {internal_error(e)}")
        code = int(ExitCode.INTERNAL)
    if cancel.cancelled:
        # the workloads' threads may still be unwinding: leave without waiting for them (their
        # requests are refused by the cancel; everything the run owed is written and flushed)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    # Exiting: the interpreter's final collections would walk the whole heap (~50 ms) to free
    # what the process's end frees anyway; atexit handlers and flushes still run.
    gc.freeze()
    sys.exit(code)
