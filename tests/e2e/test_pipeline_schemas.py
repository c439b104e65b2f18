"""Every pipeline file against the schema or models its own ecosystem maintains, and each check
shown able to fail on a planted mistake:

- action.yml and every workflow (.github/workflows, the examples) against SchemaStore's
  github-action / github-workflow schemas as check-jsonschema vendors them (offline copies);
- the GitLab component and jobs against GitLab's own CI schema (check-jsonschema's vendored
  gitlab-ci.json), one YAML document at a time: a component is a `spec:` header and the jobs;
- Argo templates parsed by Argo's own models (hera's, generated from Argo's OpenAPI), strictly:
  the model read back must hold every field the file has, so a misspelt key is an error;
- the workflows with actionlint, where it is installed (it is a Go binary; no Python package ships it).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from check_jsonschema.builtin_schemas import get_builtin_schema
from hera.workflows import models as argo
from ruamel.yaml import YAML

from tests.support.helpers import REPO
from tools.release_action import pin

EXAMPLES = REPO / "examples"


def _examples(platform: str, suffix: str) -> list[Path]:
    """The examples for one platform: under examples/PLATFORM/ or named for it (examples/fleet/)."""
    return sorted(
        p
        for p in EXAMPLES.rglob(f"*{suffix}")
        if p.relative_to(EXAMPLES).parts[0] == platform or p.stem == platform  # not examples/argocd/
    )


WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml")) + _examples("github", ".yml")
GITLAB = [REPO / "templates" / "verify.yml", *_examples("gitlab", ".yml")]
ARGO = _examples("argo", ".yaml")
ARGO_KINDS = {"WorkflowTemplate": argo.WorkflowTemplate, "Workflow": argo.Workflow}


def load_all(text: str) -> list[Any]:
    """YAML 1.2, as GitHub, GitLab and check-jsonschema read it (`on:` is a key, not `true`)."""
    return [d for d in YAML(typ="safe", pure=True).load_all(text) if d is not None]


def docs(path: Path) -> list[Any]:
    return load_all(path.read_text())


def schema_errors(schema: str, doc: Any) -> list[str]:
    """Every violation of the vendored schema `schema`, as `path: message` lines."""
    contract = get_builtin_schema(f"vendor.{schema}")
    validator_cls = jsonschema.validators.validator_for(contract)
    validator = validator_cls(contract, format_checker=validator_cls.FORMAT_CHECKER)
    return sorted(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(doc)
    )


def _lost(original: Any, parsed: Any, path: str = "") -> list[str]:
    """Keys of `original` that the model dropped or changed (a misspelt or misplaced field)."""
    if isinstance(original, dict) and isinstance(parsed, dict):
        out = [f"{path}/{k}: not a field here" for k in original if k not in parsed]
        return out + [
            e for k in original if k in parsed for e in _lost(original[k], parsed[k], f"{path}/{k}")
        ]
    if isinstance(original, list) and isinstance(parsed, list) and len(original) == len(parsed):
        return [
            e
            for i, (a, b) in enumerate(zip(original, parsed, strict=True))
            for e in _lost(a, b, f"{path}[{i}]")
        ]
    return [] if original == parsed else [f"{path}: {original!r} read as {parsed!r}"]


def argo_errors(doc: dict[str, Any]) -> list[str]:
    """Argo's models (hera) parse `doc`; what they could not hold is an error too."""
    model = ARGO_KINDS.get(doc.get("kind", ""))
    if model is None:
        return []  # RBAC and the like: kubectl on kubesim judges them (tests/e2e/test_argo_rbac.py)
    try:
        parsed = model.model_validate(doc)
    except ValueError as e:
        return [str(e).splitlines()[0]]
    return _lost(doc, parsed.model_dump(by_alias=True, exclude_unset=True, mode="json"))


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_the_schemas_cover_every_pipeline_file() -> None:
    assert {rel(p) for p in WORKFLOWS} >= {
        ".github/workflows/ci.yml", ".github/workflows/release.yml", ".github/workflows/docs.yml",
        "examples/github/verify.yml",
        "examples/fleet/github.yml",
    }  # fmt: skip
    assert {rel(p) for p in GITLAB} >= {
        "templates/verify.yml", "examples/gitlab/.gitlab-ci.yml", "examples/fleet/gitlab.yml",
    }  # fmt: skip
    assert {rel(p) for p in ARGO} >= {"examples/argo/workflowtemplate.yaml", "examples/fleet/argo.yaml"}


def test_action_yml_passes_the_github_action_schema() -> None:
    (action,) = docs(REPO / "action.yml")
    assert schema_errors("github-actions", action) == []


def test_the_released_action_yml_passes_the_schema_and_runs_the_image_by_digest() -> None:
    digest = "sha256:" + "0123456789abcdef" * 4
    released = pin(
        action=(REPO / "action.yml").read_text(), image="ghcr.io/acme/rollout-verify", digest=digest
    )
    (action,) = load_all(released)
    assert schema_errors("github-actions", action) == []
    assert action["runs"] == {
        **docs(REPO / "action.yml")[0]["runs"],
        "image": f"docker://ghcr.io/acme/rollout-verify@{digest}",
    }


@pytest.mark.parametrize("path", WORKFLOWS, ids=rel)
def test_workflow_passes_the_github_workflow_schema(path: Path) -> None:
    (workflow,) = docs(path)
    assert schema_errors("github-workflows", workflow) == []


@pytest.mark.parametrize("path", GITLAB, ids=rel)
def test_gitlab_file_passes_gitlabs_ci_schema(path: Path) -> None:
    for doc in docs(path):
        assert schema_errors("gitlab-ci", doc) == []


@pytest.mark.parametrize("path", ARGO, ids=rel)
def test_argo_file_parses_with_argos_models(path: Path) -> None:
    found = [d for d in docs(path) if d.get("kind") in ARGO_KINDS]
    assert found or path.name == "rbac.yaml", f"{rel(path)} has no Workflow or WorkflowTemplate"
    for doc in docs(path):
        assert argo_errors(doc) == []


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _first_job(doc: dict[str, Any]) -> str:
    return next(k for k, v in doc.items() if isinstance(v, dict) and "script" in v)


PLANTED: list[tuple[str, str, Callable[[Any], Any], str]] = [
    # (file, checker, mistake, what the checker says)
    ("action.yml", "github-actions", lambda d: _set(d, ("runs", "using"), "dockr"), "runs"),
    ("action.yml", "github-actions", lambda d: _set(d, ("inputs", "timeout", "required"), "no"), "inputs/timeout"),
    (".github/workflows/release.yml", "github-workflows",
     lambda d: _set(d, ("jobs", "image", "runs_on"), "ubuntu-24.04"), "jobs/image"),
    (".github/workflows/ci.yml", "github-workflows", lambda d: _set(d, ("permissions", "contents"), "all"), "permissions"),
    ("templates/verify.yml", "gitlab-ci",
     lambda d: _set(d, (_first_job(d), "artifacts", "when"), "allways"), "artifacts/when"),
    ("templates/verify.yml", "gitlab-ci",
     lambda d: _set(d, (_first_job(d), "image", "kubernetes", "uid"), 65532), "image"),
    ("examples/gitlab/.gitlab-ci.yml", "gitlab-ci",
     lambda d: _set(d, ("verify-rollout", "artifacts", "reports", "junit"), 5), "artifacts/reports/junit"),
    ("examples/argo/workflowtemplate.yaml", "argo",
     lambda d: _set(d, ("spec", "templates", 0, "retryStrategy"), {"limits": 2}), "retryStrategy/limits: not a field"),
    ("examples/argo/workflowtemplate.yaml", "argo",
     lambda d: _set(d, ("spec", "templates", 0, "outputs", "parameters", 0, "valueFrom"), {"file": "/tmp/x"}),
     "valueFrom/file: not a field"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "checker", "mistake", "says"), PLANTED, ids=[f"{p[0]}-{i}" for i, p in enumerate(PLANTED)]
)
def test_a_planted_mistake_fails_the_check(
    name: str, checker: str, mistake: Callable[[Any], Any], says: str
) -> None:
    documents = docs(REPO / name)
    # the document a mistake goes into: the jobs (a component's second document), else the only one
    index = len(documents) - 1
    broken = mistake(documents[index])
    check: Callable[[Any], list[str]] = (
        argo_errors if checker == "argo" else lambda d: schema_errors(checker, d)
    )
    assert check(documents[index]) == [], "the file itself must pass for the mistake to count"
    errors = check(broken)
    assert errors, f"{checker} accepted {name} with the mistake"
    assert any(says in e for e in errors), errors


ACTIONLINT = shutil.which("actionlint")


@pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint is not installed (a Go binary; no package here ships it)"
)
def test_workflows_pass_actionlint() -> None:
    done = subprocess.run(
        [str(ACTIONLINT), "-no-color", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
