"""A credential the cluster refuses (401) is named in the one line that ends the run (issue 30,
"identity in every 401"): where it came from (the kubeconfig file and user entry, the token file,
the exec plugin), its expiry when the token says it (a JWT's `exp`, nothing else of it), and
what renews it; exit 3, and the token itself never printed."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

from tests.kubesim import Cluster
from tests.support import hostile
from tests.support.helpers import Outcome, plant, run_verify

RECIPE = "see the docs' 'Credentials per platform' (docs/credentials.md)"


def jwt(*, exp: float) -> str:
    """A JWT-shaped token (as `kubectl create token` gives) that no cluster here issued."""

    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    claims = {
        "iss": "https://kubernetes.default.svc",
        "sub": "system:serviceaccount:shop:ci",
        "exp": int(exp),
    }
    token = f"{part({'alg': 'RS256', 'kid': 'k1'})}.{part(claims)}.{'s' * 43}"
    plant(token)
    return token


def refusal(out: Outcome) -> str:
    lines = {ln for ln in (out.stdout + out.stderr).splitlines() if "(HTTP 401)" in ln}
    assert len(lines) == 1, out.everything
    return lines.pop()


def test_a_kubeconfig_token_the_cluster_rejects_names_the_user_entry_its_expiry_and_the_fix(
    cluster: Cluster, tmp_path: Path
) -> None:
    path = cluster.write_kubeconfig(
        tmp_path / "ci.kubeconfig", token=jwt(exp=time.time() - 3 * 3600 - 60), user="ci-deployer"
    )
    out = run_verify("--deployment", "web", kubeconfig=path, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    line = refusal(out)
    assert f'the cluster did not accept the token of kubeconfig user "ci-deployer" (file "{path}")' in line, (
        line
    )
    assert "; it expired " in line and " UTC (3 h ago)" in line, line
    assert f"give the kubeconfig a fresh token ({RECIPE})" in line, line


def test_a_token_file_or_an_exec_plugins_token_refused_is_named_by_its_source(tmp_path: Path) -> None:
    def unauthorized(request: hostile.Request) -> hostile.Answer:
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": "Unauthorized",
            "code": 401,
        }
        return hostile.json_answer(status, status="401 Unauthorized")

    token_file = tmp_path / "token"
    token_file.write_text(jwt(exp=time.time() + 7200) + "\n")  # trimmed, as client-go trims it
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = tmp_path / "asked"
    plugin = bin_dir / "get-token"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "plugin-token-0d6f2b9a71"},
    }
    plant("plugin-token-0d6f2b9a71")
    plugin.write_text(
        f"#!{sys.executable}\nopen({str(asked)!r}, 'a').write('x')\nprint({json.dumps(credential)!r})\n"
    )
    plugin.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    with hostile.HostileApi(unauthorized) as api:
        by_file = run_verify(
            "--deployment",
            "web",
            kubeconfig=api.kubeconfig(tmp_path / "a", user={"tokenFile": str(token_file)}),
            tmp_path=tmp_path,
        )
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "get-token"}}
        by_plugin = run_verify(
            "--deployment",
            "web",
            kubeconfig=api.kubeconfig(tmp_path / "b", user=user),
            tmp_path=tmp_path,
            env=env,
        )
    assert by_file.code == 3 and by_plugin.code == 3, by_file.everything + by_plugin.everything
    line = refusal(by_file)
    assert (
        f'the cluster did not accept the token in {token_file} (kubeconfig user "ci" (file "{tmp_path / "a"}") tokenFile)'
        in line
    )
    assert "; it expires " in line and "(in 1 h), so it was revoked or is for another cluster" in line, line
    assert f"renew the token in {token_file}" in line
    line = refusal(by_plugin)
    assert (
        "the cluster did not accept the token the exec plugin 'get-token' of kubeconfig user \"ci\"" in line
    ), line
    assert "the plugin was asked again and gave no token the cluster accepts; check its login" in line
    assert asked.read_text() == "xx"  # asked once more after the 401 (as client-go), then no more
