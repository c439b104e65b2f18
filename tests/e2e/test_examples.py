"""action.yml, the Argo template and the GitLab component map every input to a real setting,
every setting a user needs has an input in each, and every example names only real settings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helpers import REPO
from verify import docs
from verify.config.flags import build_parser
from verify.config.naming import env_var, pipeline_input
from verify.config.settings import FIELDS

EXAMPLES = REPO / "examples"
HELM_TEMPLATES = EXAMPLES / "helm" / "templates"  # Go templates: checked rendered, below
ENV_TO_FIELD = {env_var(name): name for name in FIELDS}
# Every setting is user-facing: each must be an input of the Action, the Argo template and the
# GitLab component, under the same name (pipeline_input).
USER_SETTINGS = set(FIELDS)
REQUIRED = {
    "namespace", "deployment", "containers", "expect_env", "expect_file", "restart", "timeout",
    "exec_timeout", "concurrency", "context", "report_json", "junit", "summary", "output_dir",
    "from_spec", "volume_grace", "kubeconfig_data",
}  # fmt: skip
GITLAB_ONLY = {
    "job-name",
    "stage",
    "image",
    "git-strategy",
}  # where and how the job runs, not what it verifies
# the Secret VERIFY_KUBECONFIG_DATA is read from; whether the report files are an output artifact
ARGO_ONLY = {"kubeconfig-secret", "report-artifact"}


def load(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def mapping(env: dict[str, str], pattern: str) -> dict[str, str]:
    """input name -> setting, from VERIFY_X: <reference to exactly one input>."""
    out: dict[str, str] = {}
    for var, value in env.items():
        m = re.fullmatch(pattern, str(value))
        assert m, f"{var}={value!r} is not exactly one input reference"
        assert var in ENV_TO_FIELD, f"{var} is not a setting's env var"
        assert m.group(1) not in out, f"input {m.group(1)} is mapped twice"
        out[m.group(1)] = ENV_TO_FIELD[var]
    return out


def check(inputs: set[str], mapped: dict[str, str], *, extra: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    for name, field in mapped.items():
        assert name == pipeline_input(field), f"input {name} should be named {pipeline_input(field)}"
    assert set(mapped) <= inputs, f"env refers to undeclared inputs {set(mapped) - inputs}"
    assert inputs - set(mapped) <= extra, f"inputs mapped to no setting: {inputs - set(mapped) - extra}"
    assert set(mapped.values()) == USER_SETTINGS, (
        f"settings without an input: {USER_SETTINGS - set(mapped.values())}"
    )


def test_user_settings_include_everything_a_pipeline_needs() -> None:
    assert REQUIRED <= USER_SETTINGS


def test_action_inputs_map_one_to_one_to_settings() -> None:
    (action,) = load(REPO / "action.yml")
    assert action["runs"]["using"] == "docker" and action["runs"]["image"] == "Dockerfile"
    mapped = mapping(action["runs"]["env"], r"\$\{\{ inputs\.([a-z0-9-]+) \}\}")
    check(set(action["inputs"]), mapped)
    # none is required: a step names its workloads by deployment, targets, selector or config
    assert not any(i.get("required") for i in action["inputs"].values())
    assert all(i.get("description") for i in action["inputs"].values())
    assert set(action["outputs"]) >= {"result", "restarted", "failed-pods", "report-path"}


def test_argo_parameters_map_one_to_one_to_settings() -> None:
    (wft,) = load(EXAMPLES / "argo" / "workflowtemplate.yaml")
    assert wft["kind"] == "WorkflowTemplate"
    (tpl,) = [t for t in wft["spec"]["templates"] if t["name"] == "verify"]
    assert tpl["serviceAccountName"] == "rollout-verify"
    params = {p["name"] for p in tpl["inputs"]["parameters"]}
    env: dict[str, str] = {}
    for e in tpl["container"]["env"]:
        if "value" in e:
            env[e["name"]] = e["value"]
        else:  # the kubeconfig comes from a Secret named by a parameter, never as a value
            ref = e["valueFrom"]["secretKeyRef"]
            assert e["name"] == env_var("kubeconfig_data") and ref["key"] == "kubeconfig"
            assert ref["name"] == "{{inputs.parameters.kubeconfig-secret}}"
    mapped = mapping(env, r"\{\{inputs\.parameters\.([a-z0-9-]+)\}\}")
    mapped["kubeconfig"] = "kubeconfig_data"  # via kubeconfig-secret
    check(params | {"kubeconfig"}, mapped, extra=ARGO_ONLY)
    outdir = next(p["value"] for p in tpl["inputs"]["parameters"] if p["name"] == "output-dir")
    assert outdir, "output-dir needs a default: the output parameters read files from it"
    outputs = {p["name"]: p["valueFrom"]["path"] for p in tpl["outputs"]["parameters"]}
    assert outputs == {
        n: "{{inputs.parameters.output-dir}}/" + n
        for n in ("result", "restarted", "failed-pods", "exit-code")
    }
    sc = tpl["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0


def test_argo_report_artifact_is_opt_in_and_retries_only_what_a_retry_can_mend() -> None:
    (wft,) = load(EXAMPLES / "argo" / "workflowtemplate.yaml")
    (tpl,) = [t for t in wft["spec"]["templates"] if t["name"] == "verify"]
    defaults = {p["name"]: p["value"] for p in tpl["inputs"]["parameters"]}
    assert defaults["report-artifact"] == "false"  # an install without an artifact repository works
    (artifact,) = tpl["outputs"]["artifacts"]
    # Argo's expression: the output folder when opted in, else a folder nothing ever writes, under
    # the pod's /tmp emptyDir (a mirrored volume: the executor checks the path exists there)
    on, _, off = artifact["path"].removeprefix("{{=").removesuffix("}}").partition(" : ")
    assert on == "inputs.parameters['report-artifact'] == 'true' ? inputs.parameters['output-dir']"
    off = off.strip("'")
    mounts = [m["mountPath"] for m in tpl["container"]["volumeMounts"]]
    assert any(off.startswith(m + "/") for m in mounts) and not off.startswith(defaults["output-dir"])
    assert artifact["optional"] is True
    retry = tpl["retryStrategy"]
    assert retry["expression"] == "asInt(lastRetry.exitCode) == 3 || asInt(lastRetry.exitCode) == 4"
    assert int(retry["limit"]) >= 1


def test_gitlab_component_inputs_map_one_to_one_to_settings() -> None:
    header, jobs = load(REPO / "templates" / "verify.yml")
    inputs = set(header["spec"]["inputs"])
    ((name, job),) = jobs.items()
    assert name == "$[[ inputs.job-name ]]", "a second include must be able to name its own job"
    mapped = mapping(
        {k: v for k, v in job["variables"].items() if k.startswith("VERIFY_")},
        r"\$\[\[ inputs\.([a-z0-9-]+) \]\]",
    )
    check(inputs, mapped, extra=GITLAB_ONLY)
    # no input is required: a job names its workloads by deployment, targets, selector or config
    assert all("default" in spec for spec in header["spec"]["inputs"].values())
    assert job["image"]["entrypoint"] == [""]
    # not root under the Docker executor nor the Kubernetes one (each reads its own key)
    assert job["image"]["docker"]["user"] == job["image"]["kubernetes"]["user"] == "65532:65532"
    assert job["artifacts"]["reports"]["junit"] == "$[[ inputs.junit ]]"


def test_gitlab_include_example_names_the_component_as_gitlab_resolves_it() -> None:
    (ci,) = load(EXAMPLES / "gitlab" / "include.gitlab-ci.yml")
    header, _ = load(REPO / "templates" / "verify.yml")
    component, project = ci["include"]
    # component: <fqdn>/<project path>/<file name under templates/ without .yml>@<version>
    name = component["component"].rpartition("/")[2].partition("@")[0]
    assert (REPO / "templates" / f"{name}.yml").exists()
    assert (REPO / project["file"].lstrip("/")).exists() and project["ref"]
    for include in (component, project):
        assert set(include["inputs"]) <= set(header["spec"]["inputs"]), include
    assert component["inputs"]["job-name"] != project["inputs"]["job-name"]


def test_gitlab_job_example_uses_the_image_shell_and_junit_report() -> None:
    (ci,) = load(EXAMPLES / "gitlab" / ".gitlab-ci.yml")
    job = ci["verify-rollout"]
    assert job["image"]["entrypoint"] == [""]
    assert job["artifacts"]["reports"]["junit"] == job["variables"]["VERIFY_JUNIT"]
    assert job["artifacts"]["when"] == "always"


def test_github_example_passes_only_real_action_inputs() -> None:
    (action,) = load(REPO / "action.yml")
    (wf,) = load(EXAMPLES / "github" / "verify.yml")
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    (step,) = [s for s in steps if s.get("uses") == "./"]
    assert set(step["with"]) <= set(action["inputs"])
    assert "deployment" in step["with"] and "kubeconfig" in step["with"]
    used = set(
        re.findall(r"steps\.verify\.outputs\.([a-z-]+)", (EXAMPLES / "github" / "verify.yml").read_text())
    )
    assert used and used <= set(action["outputs"])


def test_every_example_workflow_passes_only_real_action_inputs() -> None:
    """The fleet's matrix job too: each step using the action (`./` or OWNER/rollout-verify@REF)."""
    (action,) = load(REPO / "action.yml")
    steps = [
        s
        for path in (EXAMPLES / "github" / "verify.yml", EXAMPLES / "fleet" / "github.yml")
        for job in load(path)[0]["jobs"].values()
        for s in job["steps"]
        if s.get("uses") == "./" or re.fullmatch(r"[\w.-]+/rollout-verify@[\w.-]+", s.get("uses", ""))
    ]
    assert len(steps) == 2
    for step in steps:
        assert set(step["with"]) <= set(action["inputs"]), step["with"]


EXAMPLE_FILES = sorted(
    p
    for p in [
        *EXAMPLES.rglob("*.yml"),
        *EXAMPLES.rglob("*.yaml"),
        *EXAMPLES.rglob(".gitlab-ci.yml"),
        REPO / "action.yml",
        *(REPO / "templates").glob("*.yml"),
    ]
    if HELM_TEMPLATES not in p.parents
)


@pytest.mark.parametrize("path", sorted(set(EXAMPLE_FILES)), ids=lambda p: str(p.relative_to(REPO)))
def test_every_example_parses_and_names_only_real_settings(path: Path) -> None:
    assert load(path), f"{path} is empty"
    text = path.read_text()
    for var in set(re.findall(r"\bVERIFY_[A-Z_]+\b", text)):
        assert var in ENV_TO_FIELD, f"{path.name} names {var}, which is no setting"
    flags = {opt for action in build_parser()._actions for opt in action.option_strings}
    for flag in set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text)):
        if flag in {
            "--name",
            "--config",
            "--type",
            "--from-literal",
            "--replicas",
            "--image",
            "--wait",
            "--duration",
            "--install",
            "--logs",
        }:
            continue  # kubectl/kind flags in the GitHub example, helm's in the chart's notes
        assert flag in flags, f"{path.name} names {flag}, which is no rollout-verify flag"


def test_the_helm_chart_renders_a_test_hook_job_with_real_flags_and_named_rules_only() -> None:
    from tests.support.helmtemplate import render

    text = render(EXAMPLES / "helm", release="shop", namespace="apps")
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert sorted(d["kind"] for d in docs) == ["Job", "Role", "RoleBinding", "ServiceAccount"]
    job = next(d for d in docs if d["kind"] == "Job")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "test"
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "shop-rollout-verify" and pod["restartPolicy"] == "Never"
    flags = {opt for action in build_parser()._actions for opt in action.option_strings}
    (container,) = pod["containers"]
    assert {a for a in container["args"] if a.startswith("--")} <= flags
    role = next(d for d in docs if d["kind"] == "Role")
    # the Secrets/ConfigMaps rules name their objects: never every Secret of the namespace
    assert all(
        r.get("resourceNames") for r in role["rules"] if r["resources"] in (["secrets"], ["configmaps"])
    )
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "shop-rollout-verify", "namespace": "apps"}
    ]


def _analysis_job(template: dict[str, Any]) -> dict[str, Any]:
    (metric,) = template["spec"]["metrics"]
    assert (metric["count"], metric["failureLimit"]) == (1, 0)  # one measurement; one failure fails
    job: dict[str, Any] = metric["provider"]["job"]["spec"]
    return job


def test_the_analysis_templates_run_the_image_on_the_rollout_that_asks_with_real_flags() -> None:
    """examples/argo-rollouts' AnalysisTemplate and ClusterAnalysisTemplate, and the Helm chart's
    (rendered with analysisTemplate on), are one metric: a Job running the image with
    `--rollout {{args.rollout}}` as a ServiceAccount whose Role reads Rollouts and its own Job."""
    from tests.support.helmtemplate import render

    flags = {opt for action in build_parser()._actions for opt in action.option_strings}
    examples = load(EXAMPLES / "argo-rollouts" / "analysistemplate.yaml")
    assert [d["kind"] for d in examples] == ["AnalysisTemplate", "ClusterAnalysisTemplate"]
    chart = [d for d in yaml.safe_load_all(render(EXAMPLES / "helm", release="shop", namespace="apps",
             values={"rolloutVerify": {"analysisTemplate": True}})) if d]  # fmt: skip
    templates = [*examples, next(d for d in chart if d["kind"] == "AnalysisTemplate")]
    for template in templates:
        assert [a["name"] for a in template["spec"]["args"]] == ["rollout", "revision"]
        job = _analysis_job(template)
        assert job["backoffLimit"] == 0
        (container,) = job["template"]["spec"]["containers"]
        assert container["args"][:4] == ["--rollout", "{{args.rollout}}", "--revision", "{{args.revision}}"]
        assert {a for a in container["args"] if a.startswith("--")} <= flags
    assert _analysis_job(templates[-1])["template"]["spec"]["serviceAccountName"] == "shop-rollout-verify"
    role = next(d for d in chart if d["kind"] == "Role")
    granted = {
        (g, r, v)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert {
        ("argoproj.io", "rollouts", "get"),
        ("argoproj.io", "rollouts", "watch"),
        ("batch", "jobs", "get"),
    } <= granted
    assert not any(v == "patch" for g, r, v in granted if g == "argoproj.io")  # an analysis never restarts


# until a release exists, every example names the same placeholder, pinned by digest, and says
# so where it is written (docs/build-your-own-image.md tells how to build, push and pin your own)
PLACEHOLDER = "ghcr.io/example/rollout-verify@sha256:" + "0" * 64
_IMAGE_REF = re.compile(r"ghcr\.io/example/rollout-verify[^\s\"']*")


def test_every_example_runs_the_image_by_a_digest_pinned_placeholder_that_says_so() -> None:
    files = [p for p in [*EXAMPLES.rglob("*.y*ml"), REPO / "templates" / "verify.yml"] if p.is_file()]
    named = 0
    for path in files:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            for ref in _IMAGE_REF.findall(line):
                if path.parent.name == "helm":  # values.yaml: a repository, its tag and its digest
                    assert ref == "ghcr.io/example/rollout-verify", (path, ref)
                    continue
                named += 1
                assert ref == PLACEHOLDER, f"{path.relative_to(REPO)}:{i + 1}: {ref} is not pinned by digest"
                said = " ".join(lines[max(0, i - 2) : i + 1])
                assert "placeholder" in said, f"{path.relative_to(REPO)}:{i + 1}: say it is a placeholder"
    assert named >= 7


def test_the_helm_chart_runs_the_image_by_digest_when_one_is_given() -> None:
    from tests.support.helmtemplate import render

    def image(values: dict[str, Any]) -> str:
        text = render(EXAMPLES / "helm", release="shop", namespace="apps", values=values)
        job = next(d for d in yaml.safe_load_all(text) if d and d["kind"] == "Job")
        return str(job["spec"]["template"]["spec"]["containers"][0]["image"])

    assert image({}) == PLACEHOLDER
    assert image({"rolloutVerify": {"image": {"digest": ""}}}) == "ghcr.io/example/rollout-verify:0.1.0"


def test_the_reference_lists_every_setting_under_its_pipeline_input() -> None:
    reference = (REPO / docs.REFERENCE).read_text()
    assert docs.render(readme=(REPO / "README.md").read_text()) == (REPO / "README.md").read_text()
    for name in USER_SETTINGS:
        assert f"`{env_var(name)}` | `{pipeline_input(name)}` |" in reference, name
