"""A file's digest is shown only when the file provably comes from a ConfigMap: the probe follows
every link in the pod, and only a path that resolves into a ConfigMap volume (and into no Secret
one) gets its found digest printed. A 6-digit PIN in a Secret reached through `/run` -> `/var/run`
or through the app's own link would otherwise fall to 10^6 guesses of its printed sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import configmap, deployment, plant, run_verify, secret
from verify import __version__

PIN = "482913"
PIN_DIGEST = hashlib.sha256(PIN.encode()).hexdigest()
CONF_DIGEST = hashlib.sha256(b"a=1").hexdigest()
ZERO = "0" * 64


def test_a_secret_reached_through_a_link_never_shows_its_digest_while_a_configmap_file_does(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    plant(PIN_DIGEST, PIN_DIGEST[:12])  # the leak guard fails the test if any output holds them
    cluster.apply(secret("pin", {"pin": PIN}))
    cluster.apply(configmap("cfg", {"conf": "a=1"}))
    cluster.apply(
        deployment(
            "web",
            replicas=1,
            # the app links into its Secret volume itself before it starts
            command=["sh", "-c", "mkdir -p /srv/app && ln -s /var/run/pin/pin /srv/app/pin && exec sleep 3600"],
            volumes=[
                {"name": "pin", "secret": {"secretName": "pin"}},
                {"name": "cfg", "configMap": {"name": "cfg"}},
            ],
            # the Secret is mounted at /var/run/pin; `/run` and `/var/run` are one directory
            mounts=[{"name": "pin", "mountPath": "/var/run/pin"}, {"name": "cfg", "mountPath": "/etc/cfg"}],
        )
    )
    cluster.wait_rollout("web")
    (tmp_path / "out").write_text("")
    (tmp_path / "step-summary").write_text("")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary"),
    }
    out = run_verify(
        "web",
        "--expect-file",
        f"/run/pin/pin=sha256:{ZERO}",
        "--expect-file",
        f"/srv/app/pin=sha256:{ZERO}",
        "--expect-file",
        f"/etc/cfg/conf=sha256:{ZERO}",
        "--restart",
        "never",
        "--volume-grace",
        "0",
        "--timeout",
        "60s",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
        env=env,
    )
    assert out.code == 1, out.everything
    step_summary = (tmp_path / "step-summary").read_text()
    for name, text in (("outputs", out.everything), ("step summary", step_summary)):
        assert PIN_DIGEST[:12] not in text, name
    checks = {
        c["target"]: c["detail"]
        for c in out.report["workloads"][0]["attempts"][-1]["pods"][0]["containers"][0]["checks"]  # type: ignore[index]
    }
    assert checks == {
        "/run/pin/pin": "content differs from the expected sha256",
        "/srv/app/pin": "content differs from the expected sha256",
        "/etc/cfg/conf": f"content differs from the expected sha256 (expected {ZERO[:12]}, found {CONF_DIGEST[:12]})",
    }
    assert f"found {CONF_DIGEST[:12]}" in out.stderr and f"found {CONF_DIGEST[:12]}" in step_summary
    # the report says what ran against what
    assert out.report is not None
    assert out.report["version"] == __version__
    assert out.report["server_version"].startswith("v")
    assert isinstance(out.report["context"], str) and out.report["context"]
    assert out.report["duration_seconds"] > 0 and out.report["started_at"] < out.report["ended_at"]
