"""In-cluster configuration: with no --kubeconfig/--context and a mounted service account, the
verifier uses it (token, CA, namespace), as a Job or an Argo step would."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, seen

SA = "/var/run/secrets/kubernetes.io/serviceaccount"


@pytest.mark.parametrize("on_github", [False, True], ids=["plain", "github"])
def test_mounted_service_account_is_used_when_no_kubeconfig_is_given(
    cluster: Cluster, tmp_path: Path, on_github: bool
) -> None:
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})
    cluster.apply(
        {
            **deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]),
            "metadata": {"name": "web", "namespace": "apps"},
        }
    )
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(cluster.admin_token)
    (sa / "ca.crt").write_bytes(cluster.ca_path.read_bytes())
    (sa / "namespace").write_text("apps")
    # a private mount namespace: the service-account directory exists only for this process
    script = (
        f"mount -t tmpfs none /run && mkdir -p {SA} && mount --bind {shlex.quote(str(sa))} {SA} && "
        f"exec {shlex.quote(sys.executable)} -m verify --deployment web --expect-env A --restart never"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "KUBECONFIG"))}
    env.update(
        {
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(cluster.port),
            "HOME": str(tmp_path),
        }
    )
    if on_github:  # a runner in a pod (actions-runner-controller): the token is masked first
        env["GITHUB_ACTIONS"] = "true"
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    seen(proc.stdout, proc.stderr)  # the leak guard reads them too (the service account's token)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "namespace apps" in proc.stderr  # the namespace came from the mounted file
    assert "PASSED deployment web: 1 pod verified" in proc.stdout
    if on_github:
        assert proc.stdout.splitlines()[0] == f"::add-mask::{cluster.admin_token}"
