"""The system of the incident behind the demo's first story, on kubesim: the Secrets Store CSI Driver's CRDs as published, a
SecretProviderClass syncing vault objects into Secret web-secrets, and Deployment web reading its
env from that Secret, upgraded in Helm's order (the Deployment before the class: Helm sorts
custom kinds last, pkg/release/util/kind_sorter.go). Shared by the end-to-end tests and the demo.

Everything goes through the real kubectl, as a user of that stack would type it."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.support.helpers import REPO, http_app_deployment
from tests.support.kubectl import KUBECTL

CRDS = REPO / "tests" / "manifests" / "secrets-store-csi-driver"
VAULT_NAMESPACE = "kubesim-vault"
MOUNT = "/mnt/secrets-store"


class Kubectl:
    """The real kubectl against one kubeconfig (a home and cache of its own)."""

    def __init__(self, kubeconfig: str, home: Path) -> None:
        self.kubeconfig, self.home = kubeconfig, home

    def __call__(self, *args: str, input: str | None = None, check: bool = True) -> str:
        env = {"KUBECONFIG": self.kubeconfig, "HOME": str(self.home), "PATH": "/usr/bin:/bin"}
        proc = subprocess.run(
            [KUBECTL, "--cache-dir", str(self.home / "cache"), *args],
            capture_output=True,
            text=True,
            env=env,
            input=input,
            timeout=60,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def apply(self, *docs: dict[str, Any]) -> str:
        return self(*("apply", "-f", "-"), input=yaml.safe_dump_all(docs))


def provider_class(objects: list[str], *, name: str = "web-kv", vault: str = "web-kv") -> dict[str, Any]:
    """A class listing `objects` from the azure vault `vault`, each synced to Secret web-secrets."""
    entries = "".join(f"  - |\n    objectName: {o}\n    objectType: secret\n" for o in objects)
    return {
        "apiVersion": "secrets-store.csi.x-k8s.io/v1",
        "kind": "SecretProviderClass",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "provider": "azure",
            "parameters": {"keyvaultName": vault, "objects": "array:\n" + entries},
            "secretObjects": [
                {
                    "secretName": "web-secrets",
                    "type": "Opaque",
                    "data": [{"objectName": o, "key": o} for o in objects],
                }
            ],
        },
    }


def web(release: str, *, replicas: int = 2, ready_after: int = 0) -> dict[str, Any]:
    """Deployment web: the config app (`/health` always 200, `/config` 503 without
    FEATURE_CREDENTIAL), env from the synced Secret, the CSI volume at /mnt/secrets-store.
    `ready_after`: seconds before a new pod turns Ready (its readiness probe's initial delay)."""
    d = http_app_deployment(
        "web",
        replicas=replicas,
        required_env=["FEATURE_CREDENTIAL"],
        env_from=[{"secretRef": {"name": "web-secrets", "optional": True}}],
    )
    d["metadata"]["labels"] = {"app": "web"}
    spec = d["spec"]
    spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    tpl = spec["template"]
    tpl["metadata"]["annotations"] = {"release": release}
    tpl["spec"]["volumes"] = [
        {
            "name": "secrets-store-inline",
            "csi": {
                "driver": "secrets-store.csi.k8s.io",
                "readOnly": True,
                "volumeAttributes": {"secretProviderClass": "web-kv"},
            },
        }
    ]
    app = tpl["spec"]["containers"][0]
    app["volumeMounts"] = [{"name": "secrets-store-inline", "mountPath": MOUNT, "readOnly": True}]
    if ready_after:
        app["readinessProbe"]["initialDelaySeconds"] = ready_after
    return d


def install(kubectl: Kubectl, **vault: str) -> None:
    """The driver's CRDs as published, and the vault web-kv holding `vault`."""
    kubectl("apply", "-f", str(CRDS))
    kubectl(
        "wait", "--for", "condition=established", "--timeout", "30s",
        "crd/secretproviderclasses.secrets-store.csi.x-k8s.io",
        "crd/secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io",
    )  # fmt: skip
    kubectl("create", "namespace", VAULT_NAMESPACE)
    set_vault(kubectl, **vault)


def set_vault(kubectl: Kubectl, **values: str) -> None:
    """The vault's content now (an external store's change: plain kubectl on kubesim)."""
    data = {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}
    kubectl.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "web-kv", "namespace": VAULT_NAMESPACE},
            "data": data,
        }
    )


def pods(kubectl: Kubectl) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def synced(kubectl: Kubectl) -> set[str]:
    """The keys of the synced Secret web-secrets now (empty when it does not exist)."""
    out = kubectl("get", "secret", "web-secrets", "-o", "json", check=False)
    return set(json.loads(out).get("data") or {}) if out else set()


def wait(pred: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def release_one(kubectl: Kubectl) -> None:
    """Release 1: the vault holds DB_URL; Helm applies the Deployment, then the class."""
    kubectl.apply(web("1"))
    kubectl.apply(provider_class(["DB_URL"]))
    kubectl("rollout", "status", "deployment/web", "--timeout=90s")


def running(pod: dict[str, Any]) -> bool:
    return any(
        "running" in (cs.get("state") or {})
        for cs in (pod.get("status") or {}).get("containerStatuses") or []
    )


def upgrade_in_helm_order(kubectl: Kubectl) -> str:
    """Release 2, as `helm upgrade` applies it: the vault already holds FEATURE_CREDENTIAL, the
    Deployment is applied first, its first new pod mounts the class as it still is (DB_URL
    only), then the class gains FEATURE_CREDENTIAL. The driver's rotation brings the key to the
    synced Secret before the second new pod starts, so that one has it and the first does not.
    Returns the first new pod's name (the stale one)."""
    old = {p["metadata"]["name"] for p in pods(kubectl)}
    kubectl.apply(web("2", ready_after=8))
    new: list[dict[str, Any]] = []

    def first_new_running() -> bool:
        new[:] = [p for p in pods(kubectl) if p["metadata"]["name"] not in old and running(p)]
        return bool(new)

    wait(first_new_running, "the first pod of release 2 to start")
    time.sleep(1.5)  # the class is a moment later in Helm's stream, and timestamps are in seconds
    kubectl.apply(provider_class(["DB_URL", "FEATURE_CREDENTIAL"]))
    wait(lambda: "FEATURE_CREDENTIAL" in synced(kubectl), "rotation to sync FEATURE_CREDENTIAL")
    kubectl("rollout", "status", "deployment/web", "--timeout=120s")
    return str(new[0]["metadata"]["name"])


def has_key(kubectl: Kubectl, pod: str) -> bool:
    """The incident's own hand-written check: `printenv | cut -d= -f1 | grep -qx FEATURE_CREDENTIAL` in the pod."""
    out = kubectl("exec", pod, "-c", "app", "--", "printenv", check=False)
    return "FEATURE_CREDENTIAL" in {line.split("=", 1)[0] for line in out.splitlines()}
