"""The job: settings (flags over `VERIFY_*` env) joined with the targets they and --config name,
every run-level default applied; every input problem raised here, before anything talks to the
cluster."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from verify.config.flags import parse
from verify.config.naming import (
    ENV_CUTOFF,
    ENV_PREFIX,
    FLAGS,
    config_error,
    config_errors,
    did_you_mean,
    env_var,
)
from verify.config.settings import FIELDS, InvalidSettings, Settings
from verify.config.values import parse_target
from verify.errors import ConfigError, ConfigFileError
from verify.model import FileSpec, HttpExpectation, WorkloadRef

if TYPE_CHECKING:
    from verify.config.file import TargetSpec


@dataclass(frozen=True)
class TargetPlan:
    """What one workload is checked for, every run-level default already applied."""

    ref: WorkloadRef
    namespace: str | None
    containers: tuple[str, ...]
    expect_env: tuple[str, ...]
    expect_file: tuple[FileSpec, ...]
    expect_http: tuple[HttpExpectation, ...]
    from_spec: bool
    restart: Literal["once", "never"]
    revision: Literal["latest", "stable"] = "latest"  # a Rollout's pods to verify


def plan_target(*, settings: Settings, ref: WorkloadRef, spec: TargetSpec | None = None) -> TargetPlan:
    """A target's own fields win; the rest comes from the run. --from-spec is on by default
    when the target has no explicit env/file expectation."""

    def pick(name: str) -> Any:
        own = getattr(spec, name) if spec is not None else None
        return own if own is not None else getattr(settings, name)

    env, files = tuple(pick("expect_env")), tuple(pick("expect_file"))
    from_spec = pick("from_spec")
    return TargetPlan(
        ref=ref,
        namespace=(spec.namespace if spec is not None else None) or ref.namespace,
        containers=tuple(pick("containers")),
        expect_env=env,
        expect_file=files,
        expect_http=tuple(pick("expect_http")),
        from_spec=bool(from_spec) if from_spec is not None else not (env or files),
        restart=pick("restart"),
        revision=pick("revision"),
    )


@dataclass(frozen=True)
class Job:
    """Everything the config stage decides: the settings and the named targets (a --selector
    adds more at run time, with the run-level expectations)."""

    settings: Settings
    targets: tuple[TargetPlan, ...]


def load_job(*, argv: Sequence[str], environ: Mapping[str, str]) -> Job:
    """Settings (flags over VERIFY_* env) plus the targets they and --config name; every
    input problem is a ConfigError raised here, before anything talks to the cluster."""
    try:
        settings = load_settings(argv=argv, environ=environ)
    except ConfigError as e:  # with the --config file's own problems, all at once
        path = vars(parse(list(argv))).get("config") or environ.get(env_var("config"))
        more = _file_problems(path) if e.field != "argv" and path else ()
        raise ConfigError(e.lines[0], field=e.field, lines=(*e.lines, *more)) if more else e from None
    refs: list[WorkloadRef] = list(settings.targets)
    if settings.rollout is not None:
        refs.insert(0, WorkloadRef(kind="rollout", name=settings.rollout))
    if settings.deployment is not None:
        refs.insert(0, WorkloadRef(kind="deployment", name=settings.deployment))
    plans = [plan_target(settings=settings, ref=ref) for ref in dict.fromkeys(refs)]
    if settings.config is not None:
        try:
            # imported only for --config: building its models is ~10% of a run's start-up
            from verify.config.file import load_targets

            specs = load_targets(path=settings.config)
        except ConfigFileError as e:
            raise config_error("config", *e.lines) from None

        def key(p: TargetPlan) -> tuple[str, str, str | None]:
            return (p.ref.kind, p.ref.name, p.namespace or settings.namespace)

        named = {key(p) for p in plans}
        for spec in specs:
            plan = plan_target(settings=settings, ref=spec.target, spec=spec)
            if key(plan) in named:
                raise config_error(
                    "config",
                    f"{settings.config}: {plan.ref} is also named by --target/--deployment/--rollout; "
                    "name it once",
                )
            named.add(key(plan))
            plans.append(plan)
    if not plans and settings.selector is None:
        raise config_error(
            "targets",
            "nothing to verify; name a workload (web, deploy/web, sts/db: --target KIND/NAME, --deployment "
            "NAME), --selector LABELS or --config FILE",
        )
    for plan in plans:
        if not plan.from_spec and not (plan.expect_env or plan.expect_file or plan.expect_http):
            raise config_error(
                "from_spec",
                f"is off and {plan.ref} has no --expect-env/--expect-file/--expect-http: nothing to "
                "verify; add an expectation or drop --no-from-spec",
            )
    if (
        settings.selector is not None
        and settings.from_spec is False
        and not (settings.expect_env or settings.expect_file or settings.expect_http)
    ):
        raise config_error(
            "from_spec",
            "is off and no --expect-env/--expect-file/--expect-http is given for the --selector "
            "workloads: nothing to verify; add an expectation or drop --no-from-spec",
        )
    return Job(settings=settings, targets=tuple(plans))


def _file_problems(path: str) -> tuple[str, ...]:
    """The --config file's problems as their lines, for a run whose other settings are wrong too."""
    from verify.config.file import load_targets

    try:
        load_targets(path=path)
    except ConfigFileError as e:
        return config_error("config", *e.lines).lines
    return ()


def _misspelled(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """A VERIFY_* variable that is almost a setting's is a typo that would silently do nothing
    (VERIFY_EXPECT_ENVS); one far from every setting may belong to another tool (VERIFY_SSL)."""
    known = [env_var(name) for name in FIELDS]
    problems = []
    for var in sorted(environ):
        if not var.startswith(ENV_PREFIX) or var in known or not environ[var].strip():
            continue
        close = did_you_mean(var, known, cutoff=ENV_CUTOFF)
        if close:
            problems.append(("", f"{var} is not a setting; did you mean {close}?"))
    return problems


_NAME_LIKE = re.compile(r"[a-z0-9]([-a-z0-9./]{0,300})")


def _positional_targets(words: Sequence[str]) -> list[str]:
    """`deploy/web`, `statefulset/db` or a bare `web` (a Deployment), as kubectl rollout status
    takes them, as --target values. A word that is no name at all may be a value that lost its
    flag (a token): it is counted, never shown."""
    out: list[str] = []
    problems: list[str] = []
    for i, word in enumerate(words, 1):
        text = word if "/" in word else f"deployment/{word}"
        if not _NAME_LIKE.fullmatch(word):
            problems.append(
                f"argument {i} is not KIND/NAME or a Deployment name (not shown); give e.g. "
                "deploy/web, statefulset/db or web"
            )
            continue
        try:
            parse_target(text)
        except ValueError as e:
            problems.append(f"argument {i}: {e}")
            continue
        out.append(text)
    if problems:
        raise config_error("", *problems)
    return out


def load_settings(*, argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """Parse `argv` over the VERIFY_* values in `environ`; flags (even repeatable) replace env."""
    namespace = parse(list(argv))
    typos = _misspelled(environ)
    for name in ("help", "version"):
        delattr(namespace, name)
    given = _positional_targets(namespace.targets_given)
    del namespace.targets_given
    if given:
        namespace.targets = [*given, *(namespace.targets or [])]
    for field, kind in (("deployment", "Deployment"), ("rollout", "Rollout")):
        names = list(dict.fromkeys(getattr(namespace, field) or []))
        if len(names) > 1:
            raise config_error(
                field,
                f"names one {kind} but was given {len(names)}; to verify several, "
                f"repeat --target {field}/NAME",
            )
        setattr(namespace, field, names[0] if names else None)
    overrides = {k: v for k, v in vars(namespace).items() if v is not None}
    try:
        settings = Settings.from_sources(environ=environ, flags=overrides)
    except InvalidSettings as exc:  # every wrong setting at once (typos too), one line each
        raise config_errors([*typos, *exc.problems][:20]) from None
    if typos:
        raise config_errors(typos)
    return settings


def settings_fields() -> list[tuple[str, str, str, str]]:
    """(field name, env var, CLI flag or "", description) rows, for generating docs."""
    return [
        (name, env_var(name), FLAGS.get(name, ""), setting.description) for name, setting in FIELDS.items()
    ]
