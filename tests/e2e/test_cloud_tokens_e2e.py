"""Cloud tokens minted in-process when the kubeconfig's exec plugin is not installed: an EKS
kubeconfig as `aws eks update-kubeconfig` writes it, in an environment without `aws`, connects
with the AWS credentials of the environment. kubesim plays the cluster's authenticator and STS:
it checks the token's SigV4 signature itself (tests/kubesim/apiserver/eks.py), never AWS."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.kubesim import Cluster, Knobs
from tests.kubesim.apiserver.eks import TEST_ACCESS_KEY_ID, TEST_SECRET_ACCESS_KEY
from tests.support.helpers import deployment, plant, run_verify

CLUSTER = "shop"
WRONG_SECRET = "wrong/Secret+Key/000000000000000000000001"


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, eks_cluster_name=CLUSTER)


def eks_kubeconfig(
    cluster: Cluster, path: Path, *, command: str = "aws", args: list[str] | None = None
) -> str:
    """The user entry `aws eks update-kubeconfig --region eu-west-1 --name shop` writes."""
    doc = yaml.safe_load(cluster.kubeconfig())
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": args
            or ["--region", "eu-west-1", "eks", "get-token", "--cluster-name", CLUSTER, "--output", "json"],
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def aws_env(tmp_path: Path, *, secret: str = TEST_SECRET_ACCESS_KEY) -> dict[str, str]:
    """No `aws` on PATH, the test identity's keys, nothing else of AWS (no profile, no IMDS)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    assert shutil.which("aws", path=str(empty)) is None
    plant(secret)
    return {
        "PATH": str(empty),
        "AWS_ACCESS_KEY_ID": TEST_ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": secret,
        "AWS_SESSION_TOKEN": "",
        "AWS_PROFILE": "",
        "AWS_REGION": "",
        "AWS_DEFAULT_REGION": "",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }


def test_an_eks_kubeconfig_without_the_aws_cli_connects_with_the_environments_credentials(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kc = eks_kubeconfig(cluster, tmp_path / "kc")
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=aws_env(tmp_path)
    )
    assert out.code == 0, out.everything
    accepted = cluster.call(lambda: [t for t in cluster.auth.tokens if t.startswith("k8s-aws-v1.")])
    assert accepted, "kubesim authenticated no EKS token"
    assert cluster.call(lambda: list(cluster.auth.refused)) == []
    assert "k8s-aws-v1." not in out.everything


def test_aws_iam_authenticators_kubeconfig_is_minted_too(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kc = eks_kubeconfig(
        cluster, tmp_path / "kc", command="aws-iam-authenticator", args=["token", "-i", CLUSTER]
    )
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=aws_env(tmp_path)
    )
    assert out.code == 0, out.everything


def test_a_wrong_secret_key_is_refused_by_the_cluster_in_one_clear_line(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kc = eks_kubeconfig(cluster, tmp_path / "kc")
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "A",
        kubeconfig=kc,
        tmp_path=tmp_path,
        env=aws_env(tmp_path, secret=WRONG_SECRET),
    )
    assert out.code != 0, out.everything
    assert any("SignatureDoesNotMatch" in r for r in cluster.call(lambda: list(cluster.auth.refused)))
    # said once, before any workload is waited for (the permission check meets the 401 first)
    (line,) = {ln for ln in (out.stdout + out.stderr).splitlines() if "HTTP 401" in ln}
    assert "the cluster did not accept the EKS token for cluster 'shop' minted in-process" in line, line
    assert "from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, signed for sts.eu-west-1.amazonaws.com" in line, (
        line
    )
    assert "k8s-aws-v1." not in out.everything and WRONG_SECRET not in out.everything


def test_a_token_for_another_cluster_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    kc = eks_kubeconfig(
        cluster,
        tmp_path / "kc",
        args=["--region", "eu-west-1", "eks", "get-token", "--cluster-name", "other"],
    )
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=aws_env(tmp_path))
    assert out.code != 0, out.everything
    assert any("SignatureDoesNotMatch" in r for r in cluster.call(lambda: list(cluster.auth.refused)))


def test_an_installed_aws_cli_is_run_as_before(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "aws-ran"
    (bin_dir / "aws").write_text(
        f"#!{sys.executable}\nimport json\nopen({str(ran)!r}, 'w').write('yes')\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': {cluster.admin_token!r}}}}}))\n"
    )
    (bin_dir / "aws").chmod(0o755)
    kc = eks_kubeconfig(cluster, tmp_path / "kc")
    env = {**aws_env(tmp_path, secret=WRONG_SECRET), "PATH": str(bin_dir)}
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert ran.read_text() == "yes"
    assert cluster.call(lambda: [t for t in cluster.auth.tokens if t.startswith("k8s-aws-v1.")]) == []
