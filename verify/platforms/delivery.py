"""Every report and platform output of one run, from one RunResult, so they cannot disagree:
--report-json, --junit, --summary, --output-dir, and GitHub's outputs and step summary. A sink that
fails says so and the others are still written. In a GitHub container action (root) what is
written belongs to the workspace's owner (platforms/ownership.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from verify.config.settings import Settings
from verify.platforms import github, ownership
from verify.platforms.logs import Platform, stderr
from verify.report.result import RunInfo, RunResult


def _write(path: str, text: str, *, what: str, owner: ownership.Owner | None) -> None:
    try:
        created = ownership.missing_folders(path)
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        if owner is not None:
            ownership.hand_over(paths=[*created, path], owner=owner)
    except OSError as e:
        stderr(f"rollout-verify: error: cannot write {what} {path}: {e.strerror or e}")


def deliver(
    *, result: RunResult, settings: Settings | None, environ: Mapping[str, str], info: RunInfo
) -> None:
    """Every report and platform output for `result`; a sink that fails says so and the rest run."""
    # the renderers only at the run's end: they (and the verdicts' modules) are not start-up
    from verify.platforms import argo
    from verify.report import jsondoc, markdown
    from verify.report.outputs import step_outputs

    platform = Platform.of(environ)
    owner = ownership.workspace_owner(environ=environ)
    lazy: dict[str, str] = {}

    def rendered(name: str, make: Callable[[], str]) -> str:
        if name not in lazy:
            lazy[name] = make()
        return lazy[name]

    def report_json() -> str:
        return rendered("json", lambda: jsondoc.text(jsondoc.to_json(run=result, info=info)))

    def junit_xml() -> str:
        from verify.report import junit  # XML only when a JUnit file is asked for

        return rendered("junit", lambda: junit.render(run=result, seconds=info.duration))

    def summary() -> str:
        return rendered("summary", lambda: markdown.render(run=result))

    report_path = ""
    if settings is not None:
        if settings.report_json:
            _write(settings.report_json, report_json(), what="--report-json", owner=owner)
            report_path = settings.report_json
        if settings.junit:
            _write(settings.junit, junit_xml(), what="--junit", owner=owner)
        if settings.summary:
            _write(settings.summary, summary(), what="--summary", owner=owner)
        if settings.output_dir:
            report_path = report_path or os.path.join(settings.output_dir, argo.REPORT_JSON)
    outputs = step_outputs(run=result, report_path=report_path)
    if settings is not None and settings.output_dir:
        try:
            created = ownership.missing_folders(os.path.join(settings.output_dir, argo.REPORT_JSON))
            argo.write_output_dir(
                directory=settings.output_dir,
                outputs=outputs,
                documents={
                    argo.REPORT_JSON: report_json(),
                    argo.JUNIT_XML: junit_xml(),
                    argo.SUMMARY_MD: summary(),
                },
            )
            if owner is not None:
                written = [*argo.OUTPUT_FILES, argo.REPORT_JSON, argo.JUNIT_XML, argo.SUMMARY_MD]
                ownership.hand_over(
                    paths=[*created, *(os.path.join(settings.output_dir, n) for n in written)], owner=owner
                )
        except OSError as e:
            stderr(
                f"rollout-verify: error: cannot write --output-dir {settings.output_dir}: {e.strerror or e}"
            )
    if platform.github:
        _github_files(outputs=outputs, summary=summary, environ=environ)


def _github_files(
    *, outputs: Mapping[str, str], summary: Callable[[], str], environ: Mapping[str, str]
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
                github.append_summary(path=path, markdown=summary())
        except OSError as e:
            stderr(f"rollout-verify: error: cannot write ${name} {path}: {e.strerror or e}")


def deliver_documents(
    *, documents: Mapping[str, tuple[str, str]], summary: str, environ: Mapping[str, str]
) -> None:
    """Files that are not one run's (`report merge`'s): {what: (path, text)}, each written as the
    run's reports are; on GitHub `summary` also goes to the job summary."""
    owner = ownership.workspace_owner(environ=environ)
    for what, (path, text) in documents.items():
        _write(path, text, what=what, owner=owner)
    if Platform.of(environ).github and environ.get("GITHUB_STEP_SUMMARY"):
        try:
            github.append_summary(path=environ["GITHUB_STEP_SUMMARY"], markdown=summary)
        except OSError as e:
            stderr(f"rollout-verify: error: cannot write $GITHUB_STEP_SUMMARY: {e.strerror or e}")
