"""Runner paths inside a GitHub container action: translated where a folder is mounted, a clear
error (with the two fixes) where it is not."""

from __future__ import annotations

import pytest

from verify.errors import ConfigError
from verify.platforms.container import active, translate, translated_environ


@pytest.mark.parametrize(
    ("runner_path", "inside"),
    [
        ("/home/runner/work/shop/shop/kube/config", "/github/workspace/kube/config"),
        ("/home/runner/work/shop/shop", "/github/workspace"),
        ("/opt/actions-runner/_work/shop/shop/gha-creds-1.json", "/github/workspace/gha-creds-1.json"),
        ("/home/runner/work/_temp/_github_home/.kube/config", "/github/home/.kube/config"),
        ("/home/runner/work/_temp/_github_workflow/event.json", "/github/workflow/event.json"),
        ("/github/workspace/kc", "/github/workspace/kc"),  # already a container path
        ("/etc/kubeconfig", "/etc/kubeconfig"),  # not the runner's
    ],
)
def test_runner_paths_under_mounted_folders_are_translated(runner_path: str, inside: str) -> None:
    assert translate(runner_path) == inside


@pytest.mark.parametrize(
    "unreachable",
    [
        "/home/runner/work/_temp/kubeconfig_1733221234",  # azure/k8s-set-context
        "/home/runner/.kube/config",  # aws eks update-kubeconfig
    ],
)
def test_runner_paths_outside_the_mounts_are_unreachable(unreachable: str) -> None:
    assert translate(unreachable) is None
    with pytest.raises(ConfigError) as info:
        translated_environ({"KUBECONFIG": unreachable})
    text = str(info.value)
    assert text.startswith("KUBECONFIG: ") and "outside what a container action can see" in text
    assert "the `kubeconfig` input" in text and "under the workspace" in text


def test_every_path_variable_and_each_kubeconfig_file_is_translated() -> None:
    env = translated_environ(
        {
            "KUBECONFIG": "/home/runner/work/shop/shop/a:/home/runner/work/_temp/_github_home/b",
            "GOOGLE_APPLICATION_CREDENTIALS": "/home/runner/work/shop/shop/gha-creds-2.json",
            "VERIFY_REPORT_JSON": "/home/runner/work/shop/shop/out/report.json",
            "OTHER": "/home/runner/work/_temp/x",
        }
    )
    assert env["KUBECONFIG"] == "/github/workspace/a:/github/home/b"
    assert env["GOOGLE_APPLICATION_CREDENTIALS"] == "/github/workspace/gha-creds-2.json"
    assert env["VERIFY_REPORT_JSON"] == "/github/workspace/out/report.json"
    assert env["OTHER"] == "/home/runner/work/_temp/x"  # not a path setting: left alone


def test_only_a_container_action_translates() -> None:
    assert active({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace"})
    assert not active({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/home/runner/work/shop/shop"})
    assert not active({"GITHUB_WORKSPACE": "/github/workspace"})
