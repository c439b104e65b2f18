"""A fleet fanned out by a CI matrix: one job per cluster/namespace, each writing its JSON report,
then `rollout-verify report merge` reading them as one verdict, one Markdown summary and one JUnit
file (a suite per cluster and namespace). The reports here come from real runs against kubesim."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import xmlschema
import yaml

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, run_verify

SCHEMA = xmlschema.XMLSchema(REPO / "tests" / "schemas" / "junit.xsd")
# a run that verified no workload (a --timeout given wrong), as --report-json writes it
NOTHING = {"result": "passed", "exit_code": 0, "restarted": False, "message": "", "debug_containers": [], "workloads": []}


def merge(*args: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}
    full.update(env or {})
    full["PYTHONPATH"] = str(REPO)  # this checkout's package, from the reports' folder (relative paths)
    return subprocess.run(
        [sys.executable, "-m", "verify", "report", "merge", *args],
        capture_output=True, text=True, env=full, cwd=tmp_path, timeout=60,
    )  # fmt: skip


def test_three_reports_one_failed_merge_into_one_summary_one_junit_and_exit_1(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    regions = {"eu": "shop-eu", "us": "shop-us", "ap": "shop-ap"}
    for ns in regions.values():
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        web = deployment("web", replicas=1, env=[{"name": "FEATURE_CREDENTIAL", "value": "on"}])
        if ns == "shop-ap":  # this region's release lost the key: no restart can add it
            web = deployment("web", replicas=1, env=[{"name": "OTHER", "value": "x"}])
        web["metadata"]["namespace"] = ns
        cluster.apply(web)
        cluster.wait_rollout("web", namespace=ns)
    paths = {}
    for region, ns in regions.items():
        paths[region] = tmp_path / region / "report.json"
        paths[region].parent.mkdir()
        out = run_verify(
            "--deployment", "web", "--namespace", ns, "--expect-env", "FEATURE_CREDENTIAL",
            "--report-json", str(paths[region]), kubeconfig=kubeconfig, tmp_path=tmp_path,
        )  # fmt: skip
        assert out.code == (1 if region == "ap" else 0), out.everything

    done = merge(
        *(f"{region}={path}" for region, path in paths.items()),
        "--summary", "fleet/summary.md", "--junit", "fleet/junit.xml", tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == (
        "rollout-verify: FAILED 1 of 3 not verified (3 clusters, 3 reports), exit 1"
    )
    assert "rollout-verify: ap: deployment shop-ap/web: " in done.stderr
    assert "lacks env FEATURE_CREDENTIAL" in done.stderr
    assert len(done.stdout.splitlines()) == 1  # the verdict alone, as a run's stdout ends

    summary = (tmp_path / "fleet" / "summary.md").read_text()
    table = summary.split("\n\n#### ", 1)[0]  # then each failed workload's section, as its run's summary
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 3
    assert rows[0].startswith("| ap | shop-ap | deployment/web | ❌ failed | no | ")  # failures first
    assert "lacks env FEATURE_CREDENTIAL — no source in deployment web's template provides" in rows[0]
    assert "#### ap: deployment `shop-ap/web`" in summary
    assert {r.split(" | ")[0] for r in rows[1:]} == {"| eu", "| us"}
    assert all("✅ passed" in r for r in rows[1:])

    junit = tmp_path / "fleet" / "junit.xml"
    SCHEMA.validate(str(junit))
    doc = SCHEMA.to_dict(str(junit))
    suites = {s["@name"]: s for s in doc["testsuite"]}
    assert set(suites) == {"ap shop-ap", "eu shop-eu", "us shop-us"}
    assert (doc["@tests"], doc["@failures"], doc["@errors"]) == (3, 1, 0)
    (failed,) = suites["ap shop-ap"]["testcase"]
    assert failed["@name"] == "deployment/web" and failed["@classname"] == "ap.shop-ap"
    assert "lacks env FEATURE_CREDENTIAL" in failed["failure"][0]["@message"]
    assert all("failure" not in suites[s]["testcase"][0] for s in ("eu shop-eu", "us shop-us"))

    # examples/fleet/gitlab.yml's merge job, its script as GitLab's shell runs it, over the same reports
    job = yaml.safe_load((REPO / "examples" / "fleet" / "gitlab.yml").read_text())["merge-fleet-reports"]
    work = tmp_path / "gitlab-job"
    (work / "reports").mkdir(parents=True)
    for region, path in paths.items():
        shutil.copy(path, work / "reports" / f"{region}-{regions[region]}.json")
    (work / "bin").mkdir()
    (work / "bin" / "python").symlink_to(sys.executable)
    env = {"PATH": f"{work / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        ["/bin/sh", "-ec", "\n".join(job["script"])],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    merged = SCHEMA.to_dict(str(work / job["artifacts"]["reports"]["junit"]))
    assert {s["@name"] for s in merged["testsuite"]} == {
        "ap-shop-ap shop-ap",
        "eu-shop-eu shop-eu",
        "us-shop-us shop-us",
    }


def test_a_file_that_is_no_report_exits_2_naming_it(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps(NOTHING))
    (tmp_path / "other.json").write_text(json.dumps({"kind": "SomethingElse"}))
    done = merge("good.json", "other.json", "--junit", "j.xml", tmp_path=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        'rollout-verify: error: report merge: "other.json" is not a rollout-verify report '
        "(`kind` is not a field of a version 1 report); pass the files --report-json wrote"
    )
    assert not (tmp_path / "j.xml").exists()
    missing = merge("good.json", "gone.json", tmp_path=tmp_path)
    assert missing.returncode == 2 and 'cannot read "gone.json" (No such file or directory)' in missing.stderr


def test_one_label_for_two_reports_and_a_mistyped_subcommand_exit_2_before_anything_is_read(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.json").write_text(json.dumps(NOTHING))
    twice = merge("us=a.json", "us=a.json", "--summary", "s.md", tmp_path=tmp_path)
    assert twice.returncode == 2, twice.stdout + twice.stderr
    assert "the label us names two reports" in twice.stderr and not (tmp_path / "s.md").exists()
    one = merge("eu=a.json", tmp_path=tmp_path)
    assert one.returncode == 0 and one.stdout.strip().endswith("(1 cluster, 1 report)"), one.stdout
    typo = subprocess.run(
        [sys.executable, "-m", "verify", "report", "mrge", "a.json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")}, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert typo.returncode == 2, typo.stdout + typo.stderr
    assert "did you mean `report merge`?" in typo.stderr and typo.stdout == ""
