"""A kubeconfig's `proxy-url` and `tls-server-name` are honoured as kubectl honours them: REST
calls, the watch and the exec all go through the proxy, and the server's certificate is checked
against the named server (https://vm:PORT is not in kubesim's certificate; `localhost` is)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify
from tests.support.kubectl import Kubectl
from tests.support.proxy import ConnectProxy


def kubeconfig_with(cluster: Cluster, path: Path, **cluster_fields: str) -> str:
    doc = yaml.safe_load(cluster.kubeconfig())
    doc["clusters"][0]["cluster"].update(cluster_fields)
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o600)
    return str(path)


def test_proxy_url_carries_rest_calls_watches_and_execs_as_for_kubectl(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    with ConnectProxy() as proxy:
        kc = kubeconfig_with(cluster, tmp_path / "proxied", **{"proxy-url": proxy.url})
        assert "web" in Kubectl(kc, tmp_path)("get", "deployments", "-o", "name")
        through_kubectl = len(proxy.connects)
        out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path)
        ours = proxy.connects[through_kubectl:]
    assert through_kubectl >= 1
    assert out.code == 0, out.everything
    # the REST/watch clients and each of the two execs (its own WebSocket) opened tunnels
    assert len(ours) >= 3 and set(ours) == {f"127.0.0.1:{cluster.port}"}


def test_tls_server_name_is_the_name_checked_as_for_kubectl(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    server = f"https://vm:{cluster.port}"  # /etc/hosts: vm is 127.0.0.1, a name the certificate lacks
    unnamed = kubeconfig_with(cluster, tmp_path / "unnamed", server=server)
    named = kubeconfig_with(cluster, tmp_path / "named", server=server, **{"tls-server-name": "localhost"})
    kubectl_unnamed = Kubectl(unnamed, tmp_path).run("get", "deployments", check=False)
    assert kubectl_unnamed.returncode != 0 and "certificate" in kubectl_unnamed.stderr
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=unnamed, tmp_path=tmp_path)
    assert out.code == 3 and "certificate" in out.everything
    assert "web" in Kubectl(named, tmp_path)("get", "deployments", "-o", "name")
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=named, tmp_path=tmp_path)
    assert out.code == 0, out.everything


def test_a_socks_proxy_url_is_one_line_before_any_request(cluster: Cluster, tmp_path: Path) -> None:
    kc = kubeconfig_with(cluster, tmp_path / "socks", **{"proxy-url": "socks5://127.0.0.1:1"})
    cluster.reset_counts()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 2, out.everything
    (line,) = [ln for ln in out.stderr.splitlines() if "proxy-url" in ln]
    assert "'socks5' scheme is not supported" in line and "http:// or https://" in line
    assert sum(cluster.requests.counts.values()) == 0


PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")


def proxy_env(**set_: str) -> dict[str, str]:
    """Only the proxy variables given: the others emptied (run_verify and Kubectl drop empty ones
    for kubectl; an empty value is no proxy for both)."""
    return {**{k: "" for k in PROXY_VARS}, **set_}


def test_https_proxy_and_no_proxy_from_the_environment_as_for_kubectl(cluster: Cluster, tmp_path: Path) -> None:
    """By name (vm, 127.0.0.1 in /etc/hosts), so that Go's rule 'never proxy loopback IPs and
    localhost' does not decide it: HTTPS_PROXY carries the requests, NO_PROXY=vm sends them direct."""
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    server = f"https://vm:{cluster.port}"
    kc = kubeconfig_with(cluster, tmp_path / "byname", server=server, **{"tls-server-name": "localhost"})
    with ConnectProxy() as proxy:
        for env, proxied in (
            (proxy_env(HTTPS_PROXY=proxy.url), True),
            (proxy_env(https_proxy=proxy.url, NO_PROXY="example.com,vm"), False),
            (proxy_env(HTTPS_PROXY=proxy.url, no_proxy=f".example.com,vm:{cluster.port}"), False),
            (proxy_env(HTTP_PROXY="http://127.0.0.1:1"), False),  # an https server never takes HTTP_PROXY
        ):
            before = len(proxy.connects)
            assert "web" in Kubectl(kc, tmp_path, env=env)("get", "deployments", "-o", "name")
            by_kubectl = len(proxy.connects) - before
            out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
            assert out.code == 0, (env, out.everything)
            ours = len(proxy.connects) - before - by_kubectl
            assert (by_kubectl > 0, ours > 0) == (proxied, proxied), (env, by_kubectl, ours)


def test_a_loopback_server_is_never_sent_to_the_environments_proxy(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    dead = proxy_env(HTTPS_PROXY="http://127.0.0.1:1", HTTP_PROXY="http://127.0.0.1:1")
    kc = kubeconfig_with(cluster, tmp_path / "loopback")
    assert "web" in Kubectl(kc, tmp_path, env=dead)("get", "deployments", "-o", "name")
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=dead)
    assert out.code == 0, out.everything


def test_a_tls_server_name_the_certificate_lacks_is_a_name_mismatch_not_an_untrusted_ca(
    cluster: Cluster, tmp_path: Path
) -> None:
    kc = kubeconfig_with(cluster, tmp_path / "misnamed", **{"tls-server-name": "wrong.example.com"})
    by_kubectl = Kubectl(kc, tmp_path).run("get", "deployments", check=False)
    assert by_kubectl.returncode != 0 and "not wrong.example.com" in by_kubectl.stderr  # x509: valid for ...
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    assert "does not name the server (hostname mismatch)" in out.stderr
    assert "not trusted" not in out.everything
