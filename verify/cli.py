"""Command line entry point: the only place that prints verdicts and exits.

After the run it hands one RunResult to every sink the settings and the environment ask for
(JSON, JUnit, Markdown, --output-dir, GitHub outputs and summary), so they cannot disagree.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

from verify import credentials, outcome, summary
from verify.config import ConfigError, Job, Settings, env_var, load_job
from verify.platforms import argo, github, gitlab
from verify.redact import one_line
from verify.report import RunResult, problem_lines, to_json, verdict_line

EXIT_CONFIG = 2


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _stdout(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True)
class _Platform:
    github: bool
    gitlab: bool

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> _Platform:
        return cls(github=github.active(environ=environ), gitlab=gitlab.active(environ=environ))


def _mask_early(*, environ: Mapping[str, str]) -> None:
    """On GitHub, mask kubeconfig secrets before any other line could carry them."""
    data = environ.get(env_var("kubeconfig_data"), "")
    values = credentials.mask_values(data=data) if data.strip() else []
    for line in github.mask_lines(values=values):
        _stdout(line)


def _mask_kubeconfig_file(*, settings: Settings, environ: Mapping[str, str]) -> None:
    """Mask what kube.connect will load: the in-cluster token (a runner in a pod), else the file."""
    in_cluster = environ.get("KUBERNETES_SERVICE_HOST") and os.path.exists(credentials.SA_TOKEN)
    if settings.kubeconfig is None and settings.context is None and in_cluster:
        path, token = credentials.SA_TOKEN, True
    else:
        path = (
            settings.kubeconfig
            or environ.get("KUBECONFIG", "").split(os.pathsep)[0]
            or os.path.expanduser("~/.kube/config")
        )
        token = False
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return  # kube.connect reports an unreadable file
    values = [text.strip()] if token else credentials.secret_values(text=text)
    for line in github.mask_lines(values=[v for v in values if v]):
        _stdout(line)


def _config_failure(message: str) -> RunResult:
    return RunResult(result="error", exit_code=EXIT_CONFIG, restarted=False, workloads=(), message=message)


class _Logs:
    """Progress lines on stderr. On GitHub and GitLab each workload's lines are one collapsible
    group; with several workloads verified in parallel, a workload's lines are held until it
    ends so that groups never interleave."""

    def __init__(self, platform: _Platform) -> None:
        self.platform = platform
        self.grouped = platform.github or platform.gitlab
        self._lock = threading.Lock()
        self._held: dict[str, list[str]] | None = None

    def _open(self, label: str) -> None:
        if self.platform.github:
            _stderr(github.group_start(workload=label))
        if self.platform.gitlab:
            _stderr(gitlab.section_start(title=f"rollout-verify {label}"))

    def _close(self, label: str) -> None:
        if self.platform.github:
            _stderr(github.group_end())
        if self.platform.gitlab:
            _stderr(gitlab.section_end(title=f"rollout-verify {label}"))

    def run(self, line: str) -> None:
        _stderr(f"rollout-verify: {line}")

    def begin(self, labels: Sequence[str]) -> None:
        if self.grouped and len(labels) > 1:
            self._held = {label: [] for label in labels}
        elif self.grouped and labels:
            self._open(labels[0])

    def workload(self, label: str) -> Callable[[str], None]:
        def log(line: str) -> None:
            text = f"rollout-verify: {line}"
            with self._lock:
                if self._held is not None:
                    self._held[label].append(text)
                else:
                    _stderr(text)

        return log

    def end(self, label: str) -> None:
        if not self.grouped:
            return
        with self._lock:
            if self._held is None:
                self._close(label)
                return
            self._open(label)
            for line in self._held.pop(label, []):
                _stderr(line)
            self._close(label)


def _verify(*, job: Job, kubeconfig_path: str | None, platform: _Platform) -> RunResult:
    # Heavy imports only once the arguments are known to be good (keeps --help and errors fast).
    from verify import kube, runner

    settings = job.settings
    try:
        connection = kube.connect(
            kubeconfig=kubeconfig_path,
            context=settings.context,
            concurrency=settings.concurrency,
        )
        _started()
    except kube.KubeConfigError as e:
        message = one_line(str(e))
        if settings.kubeconfig_data is not None:
            # the content came in VERIFY_KUBECONFIG_DATA (written to a file for the loader)
            message = message.replace("--kubeconfig/--context:", f"{env_var('kubeconfig_data')}:", 1)
            message = message.replace("(VERIFY_KUBECONFIG,", f"({env_var('kubeconfig_data')},")
        _stderr(f"rollout-verify: error: {message}")
        return _config_failure(message)
    try:
        return runner.execute(job=job, connection=connection, logs=_Logs(platform))
    finally:
        connection.close()


def _write(path: str, text: str, *, what: str) -> None:
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        _stderr(f"rollout-verify: error: cannot write {what} {path}: {e.strerror or e}")


def _deliver(
    *, result: RunResult, settings: Settings | None, environ: Mapping[str, str], seconds: float
) -> None:
    """Every report and platform output for `result`; a sink that fails says so and the rest run."""
    platform = _Platform.of(environ)
    lazy: dict[str, str] = {}

    def rendered(name: str, make: Callable[[], str]) -> str:
        if name not in lazy:
            lazy[name] = make()
        return lazy[name]

    def report_json() -> str:
        return rendered("json", lambda: json.dumps(to_json(run=result), indent=2) + "\n")

    def junit_xml() -> str:
        from verify import junit  # XML only when a JUnit file is asked for

        return rendered("junit", lambda: junit.render(run=result, seconds=seconds))

    def markdown() -> str:
        return rendered("summary", lambda: summary.render(run=result))

    report_path = ""
    if settings is not None:
        if settings.report_json:
            _write(settings.report_json, report_json(), what="--report-json")
            report_path = settings.report_json
        if settings.junit:
            _write(settings.junit, junit_xml(), what="--junit")
        if settings.summary:
            _write(settings.summary, markdown(), what="--summary")
        if settings.output_dir:
            report_path = report_path or os.path.join(settings.output_dir, argo.REPORT_JSON)
    outputs = outcome.step_outputs(run=result, report_path=report_path)
    if settings is not None and settings.output_dir:
        try:
            argo.write_output_dir(
                directory=settings.output_dir,
                outputs=outputs,
                documents={
                    argo.REPORT_JSON: report_json(),
                    argo.JUNIT_XML: junit_xml(),
                    argo.SUMMARY_MD: markdown(),
                },
            )
        except OSError as e:
            _stderr(
                f"rollout-verify: error: cannot write --output-dir {settings.output_dir}: {e.strerror or e}"
            )
    if platform.github:
        _github_files(outputs=outputs, markdown=markdown, environ=environ)


def _github_files(
    *, outputs: Mapping[str, str], markdown: Callable[[], str], environ: Mapping[str, str]
) -> None:
    """$GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY, when the runner provides them."""
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        path = environ.get(name, "")
        if not path:
            continue
        try:
            if name == "GITHUB_OUTPUT":
                github.write_outputs(path=path, outputs=outputs)
            else:
                github.append_summary(path=path, markdown=markdown())
        except OSError as e:
            _stderr(f"rollout-verify: error: cannot write ${name} {path}: {e.strerror or e}")


def run(*, argv: Sequence[str], environ: Mapping[str, str]) -> int:
    started = time.monotonic()
    platform = _Platform.of(environ)
    if platform.github:
        _mask_early(environ=environ)
    try:
        job = load_job(argv=argv, environ=environ)
    except ConfigError as e:
        _stderr(f"rollout-verify: error: {e}")
        result = _config_failure(str(e))
        if platform.github:
            _stdout(github.command("error", str(e), title="rollout-verify"))
        _deliver(result=result, settings=None, environ=environ, seconds=time.monotonic() - started)
        return result.exit_code
    settings = job.settings
    if platform.github and settings.kubeconfig_data is None:
        _mask_kubeconfig_file(settings=settings, environ=environ)
    with ExitStack() as stack:
        path = settings.kubeconfig
        failed: RunResult | None = None
        if settings.kubeconfig_data is not None:
            try:
                text = credentials.decode(data=settings.kubeconfig_data.get_secret_value())
                path = stack.enter_context(credentials.materialized(text=text))
            except credentials.KubeconfigDataError as e:
                message = f"{env_var('kubeconfig_data')}: {e}"
                _stderr(f"rollout-verify: error: {message}")
                failed = _config_failure(message)
        result = failed or _verify(job=job, kubeconfig_path=path, platform=platform)
    for wl in result.workloads:
        for line in problem_lines(workload=wl):
            _stdout(line)
    if platform.github:
        for line in github.error_lines(run=result):
            _stdout(line)
    if result.workloads:
        _stdout(verdict_line(run=result))
    _deliver(result=result, settings=settings, environ=environ, seconds=time.monotonic() - started)
    return result.exit_code


def _terminate(signum: int, _frame: object) -> None:
    """SIGTERM (a cancelled CI job) unwinds like Ctrl-C, so the temp kubeconfig is removed."""
    raise SystemExit(128 + signum)


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
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = run(argv=list(sys.argv[1:] if argv is None else argv), environ=os.environ)
    except Exception as e:  # a bug must still end as one line (type and place, never the message)
        from verify.runner import EXIT_INTERNAL, internal_error

        _stderr(f"rollout-verify: {internal_error(e)}")
        code = EXIT_INTERNAL
    # Exiting: the interpreter's final collections would walk the whole heap (~50 ms) to free
    # what the process's end frees anyway; atexit handlers and flushes still run.
    gc.freeze()
    sys.exit(code)
