"""Which identity and namespace a run uses, with the real kubectl as the oracle: in each situation
(KUBECONFIG lists, --kubeconfig, ~/.kube/config, --context, a mounted service account with and
without KUBECONFIG) rollout-verify's connection and kubectl must agree.

kubectl's identity is `kubectl auth whoami`; its namespace is where `kubectl get configmap marker`
finds the marker (one per namespace, each naming its namespace). rollout-verify's are asked of
kubesim through its own connection (a SelfSubjectReview over real HTTPS) and the namespace the
connection resolved. Both run in the same environment and mount namespace."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kubesim import Cluster, Rule
from tests.support.helpers import REPO, run_verify, seen
from tests.support.kubectl import KUBECTL

SA = "/var/run/secrets/kubernetes.io/serviceaccount"
NAMESPACES = ("default", "alpha", "beta", "pods-ns")
DRIVER = """
import json, os, sys
from verify.kube.access import whoami
from verify.kube.api import Api
from verify.kube.connection import connect
from verify.kube.retry import Deadline
args = json.loads(sys.argv[1])
conn = connect(kubeconfig=args["kubeconfig"], context=args["context"], environ=os.environ)
print(json.dumps({"user": whoami(Api(conn, Deadline(20))), "namespace": conn.namespace}))
conn.close()
"""


def kubeconfig_doc(cluster: Cluster, *, user: str, token: str, namespace: str | None, context: str) -> dict:
    doc = yaml.safe_load(cluster.kubeconfig(token=token, user=user))
    ctx = doc["contexts"][0]
    ctx["name"] = context
    if namespace is None:
        ctx["context"].pop("namespace")
    else:
        ctx["context"]["namespace"] = namespace
    doc["current-context"] = context
    return doc


@pytest.fixture
def world(cluster: Cluster, tmp_path: Path) -> dict[str, str]:
    """Users alice, bob, carol (each may read configmaps), a marker per namespace, and kubeconfig
    files: a (alice in alpha), b (bob in beta), c (carol, no namespace), ab-shared (bob's entry
    for the user name alice's file also defines), rel (a relative certificate-authority path)."""
    for ns in NAMESPACES[1:]:
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for ns in NAMESPACES:
        cluster.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "marker", "namespace": ns},
                "data": {"ns": ns},
            }
        )
    read = [Rule.of(["get", "list"], ["configmaps"], namespaces=list(NAMESPACES))]
    tokens = {u: cluster.add_user(u, read) for u in ("alice", "bob", "carol")}
    files: dict[str, str] = {}

    def write(name: str, doc: dict) -> None:
        path = tmp_path / "kc" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(doc))
        files[name] = str(path)

    write(
        "a", kubeconfig_doc(cluster, user="alice", token=tokens["alice"], namespace="alpha", context="ctx-a")
    )
    write("b", kubeconfig_doc(cluster, user="bob", token=tokens["bob"], namespace="beta", context="ctx-b"))
    write("c", kubeconfig_doc(cluster, user="carol", token=tokens["carol"], namespace=None, context="ctx-c"))
    # the same user name as a's, with bob's token: the first file to define "alice" wins
    shared = kubeconfig_doc(
        cluster, user="alice", token=tokens["bob"], namespace="beta", context="ctx-shared"
    )
    write("shared", shared)
    rel = kubeconfig_doc(cluster, user="carol", token=tokens["carol"], namespace="beta", context="ctx-rel")
    cluster_entry = rel["clusters"][0]["cluster"]
    cluster_entry.pop("certificate-authority-data")
    (tmp_path / "kc" / "certs").mkdir()
    (tmp_path / "kc" / "certs" / "ca.crt").write_bytes(cluster.ca_path.read_bytes())
    cluster_entry["certificate-authority"] = "certs/ca.crt"  # relative to the file's directory
    write("rel", rel)
    files["missing"] = str(tmp_path / "kc" / "does-not-exist")
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(cluster.add_user("system:serviceaccount:pods-ns:runner", read))
    (sa / "ca.crt").write_bytes(cluster.ca_path.read_bytes())
    (sa / "namespace").write_text("pods-ns")
    files["sa"] = str(sa)
    return files


def both(
    cluster: Cluster,
    tmp_path: Path,
    world: dict[str, str],
    *,
    kubeconfig_env: list[str] | None,
    home_config: str | None = None,
    explicit: str | None = None,
    context: str | None = None,
    in_cluster: bool = False,
) -> tuple[dict[str, str], dict[str, str]]:
    """(kubectl's, rollout-verify's) user and namespace in one environment."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if home_config:
        (home / ".kube").mkdir(exist_ok=True)
        (home / ".kube" / "config").write_text(Path(world[home_config]).read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "KUBECONFIG", "KUBERNETES_"))}
    env["HOME"] = str(home)
    if kubeconfig_env is not None:
        env["KUBECONFIG"] = os.pathsep.join(world[n] for n in kubeconfig_env)
    if in_cluster:
        env.update({"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(cluster.port)})
    flags = (["--kubeconfig", world[explicit]] if explicit else []) + (
        ["--context", context] if context else []
    )
    kubectl = " ".join(shlex.quote(a) for a in [KUBECTL, "--cache-dir", str(tmp_path / "cache"), *flags])
    args = json.dumps({"kubeconfig": world[explicit] if explicit else None, "context": context})
    script = (
        f"{kubectl} auth whoami -o jsonpath='{{.status.userInfo.username}}' && echo && "
        f"{kubectl} get configmap marker -o jsonpath='{{.metadata.namespace}}' && echo && "
        f"{shlex.quote(sys.executable)} -c {shlex.quote(DRIVER)} {shlex.quote(args)}"
    )
    if in_cluster:  # a private mount namespace: the service account exists only for these processes
        script = f"mount -t tmpfs none /run && mkdir -p {SA} && mount --bind {shlex.quote(world['sa'])} {SA} && {script}"
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )  # fmt: skip
    seen(proc.stdout, proc.stderr)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    user, namespace, ours = proc.stdout.splitlines()
    return {"user": user, "namespace": namespace}, json.loads(ours)


SITUATIONS = {
    # name: (KUBECONFIG list, ~/.kube/config, --kubeconfig, --context, in-cluster, expected user, namespace)
    "explicit-file": (None, None, "a", None, False, "alice", "alpha"),
    "kubeconfig-list-first-current-context-wins": (["a", "b"], None, None, None, False, "alice", "alpha"),
    "kubeconfig-list-reversed": (["b", "a"], None, None, None, False, "bob", "beta"),
    "missing-file-in-list-skipped": (["missing", "b"], None, None, None, False, "bob", "beta"),
    "context-from-the-second-file": (["a", "b"], None, None, "ctx-b", False, "bob", "beta"),
    "first-file-wins-a-shared-user-name": (["a", "shared"], None, None, "ctx-shared", False, "alice", "beta"),
    "home-config-without-namespace": (None, "c", None, None, False, "carol", "default"),
    "kubeconfig-env-beats-home": (["b"], "c", None, None, False, "bob", "beta"),
    "relative-certificate-path": (["rel"], None, None, None, False, "carol", "beta"),
    "kubeconfig-beats-mounted-service-account": (["a"], None, None, None, True, "alice", "alpha"),
    "mounted-service-account-when-nothing-else": (
        None,
        None,
        None,
        None,
        True,
        "system:serviceaccount:pods-ns:runner",
        "pods-ns",
    ),
}


@pytest.mark.parametrize("situation", list(SITUATIONS))
def test_rollout_verify_uses_the_identity_and_namespace_kubectl_uses(
    cluster: Cluster, tmp_path: Path, world: dict[str, str], situation: str
) -> None:
    env_list, home, explicit, context, in_cluster, user, namespace = SITUATIONS[situation]
    kubectl, ours = both(
        cluster, tmp_path, world,
        kubeconfig_env=env_list, home_config=home, explicit=explicit, context=context, in_cluster=in_cluster,
    )  # fmt: skip
    assert kubectl == {"user": user, "namespace": namespace}  # the oracle, as the situation means it
    assert ours == kubectl


def test_a_context_the_kubeconfig_lacks_is_named_with_the_ones_it_has(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    out = run_verify("--deployment", "web", "--context", "nope", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 2, out.everything
    assert "Expected object with name nope in kube-config/contexts list; its contexts: kubesim" in out.stderr
    assert cluster.requests.total() == 0
