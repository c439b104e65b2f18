"""The docs' credential recipes (docs/credentials.md), run as written where this machine allows: the static
ServiceAccount token recipe's shell block runs with the real kubectl against kubesim, and the
kubeconfig it leaves is the identity a run then uses (the ServiceAccount, in its namespace)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, run_verify
from tests.support.kubectl import Kubectl


def recipe(name: str) -> str:
    """The ```sh block that follows `<!-- recipe: NAME` on the docs' credentials page."""
    text = (REPO / "docs" / "credentials.md").read_text()
    m = re.search(rf"<!-- recipe: {re.escape(name)}\b.*?-->\n```sh\n(.*?)```", text, re.S)
    assert m, f"docs/credentials.md has no recipe {name!r}"
    return m.group(1)


def test_the_static_token_recipe_gives_a_kubeconfig_that_runs_as_the_serviceaccount(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    web = deployment("web", replicas=2, env=[{"name": "A", "value": "1"}])
    web["metadata"]["namespace"] = "shop"
    cluster.apply(web)
    cluster.wait_rollout("web", namespace="shop")
    admin = tmp_path / "admin.kubeconfig"
    admin.write_text(cluster.kubeconfig())
    (tmp_path / "examples").mkdir()
    shutil.copy(REPO / "examples" / "rbac.yaml", tmp_path / "examples" / "rbac.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "VERIFY_"))}
    env.update(KUBECONFIG=str(admin), HOME=str(tmp_path))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", recipe("static-token")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    made = tmp_path / "verify.kubeconfig"
    assert not (tmp_path / "ca.crt").exists()
    whoami = Kubectl(str(made), tmp_path)("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.strip() == "system:serviceaccount:shop:rollout-verify"
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=str(made), tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report["workloads"][0]["namespace"] == "shop"  # the context's namespace
