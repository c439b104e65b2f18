"""tools/release_action.py: the released action.yml names the pushed image by digest, or nothing
is written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helpers import REPO
from tools.release_action import ReleaseError, main, pin

DIGEST = "sha256:" + "ab" * 32
ACTION = (REPO / "action.yml").read_text()


def test_only_the_runs_image_line_changes() -> None:
    released = pin(action=ACTION, image="ghcr.io/acme/rollout-verify", digest=DIGEST)
    changed = [(a, b) for a, b in zip(ACTION.splitlines(), released.splitlines(), strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://ghcr.io/acme/rollout-verify@{DIGEST}")]


@pytest.mark.parametrize(
    ("image", "digest", "says"),
    [
        ("ghcr.io/Acme/rollout-verify", DIGEST, "lower-case"),  # GHCR and OCI refuse upper case
        ("ghcr.io/acme/rollout-verify:1.0.0", DIGEST, "without tag"),
        ("ghcr.io/acme/rollout-verify", "sha256:abc", "64"),
        ("ghcr.io/acme/rollout-verify", "1.0.0", "sha256"),
    ],
)
def test_a_bad_image_or_digest_is_refused(image: str, digest: str, says: str) -> None:
    with pytest.raises(ReleaseError, match=says):
        pin(action=ACTION, image=image, digest=digest)


def test_an_action_already_pinned_is_not_pinned_again() -> None:
    released = pin(action=ACTION, image="ghcr.io/acme/rollout-verify", digest=DIGEST)
    with pytest.raises(ReleaseError, match="already names an image"):
        pin(action=released, image="ghcr.io/acme/rollout-verify", digest=DIGEST)


def test_the_command_rewrites_the_file_or_exits_2_leaving_it(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    action.write_text(ACTION)
    assert main(["--image", "ghcr.io/acme/x", "--digest", "sha256:0", "--file", str(action)]) == 2
    assert action.read_text() == ACTION
    assert main(["--image", "ghcr.io/acme/x", "--digest", DIGEST, "--file", str(action)]) == 0
    assert f"image: docker://ghcr.io/acme/x@{DIGEST}\n" in action.read_text()


def _step(job: str, name: str) -> dict[str, Any]:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    (step,) = [s for s in workflow["jobs"][job]["steps"] if s.get("name") == name]
    return dict(step)


def test_the_release_builds_both_architectures_with_sbom_and_provenance_and_pins_that_digest() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    (build,) = [s for s in workflow["jobs"]["image"]["steps"] if s.get("id") == "build"]
    assert build["uses"].startswith("docker/build-push-action@")
    assert set(build["with"]["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["with"]["push"] is True and build["with"]["sbom"] is True
    assert build["with"]["provenance"] == "mode=max"
    assert workflow["jobs"]["image"]["outputs"]["digest"] == "${{ steps.build.outputs.digest }}"
    pin_step = _step("action", "Pin action.yml to the image's digest")
    assert pin_step["env"]["DIGEST"] == "${{ needs.image.outputs.digest }}"
    assert "python -m tools.release_action" in pin_step["run"]


def test_the_release_commit_goes_on_releases_vmajor_and_the_tags_move_to_it(tmp_path: Path) -> None:
    """The workflow's own shell steps, run in a clone of a small repository with a bare origin."""
    git = ["git", "-c", "init.defaultBranch=main", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run([*git, "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run([*git, "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    (work / "action.yml").write_text(ACTION)
    (work / "tools").mkdir()
    shutil.copy(REPO / "tools" / "release_action.py", work / "tools" / "release_action.py")
    (work / "tools" / "__init__.py").write_text("")
    for args in (
        ["add", "-A"],
        ["commit", "-qm", "main"],
        ["tag", "v1.2.3"],
        ["push", "-q", "origin", "main", "v1.2.3"],
    ):
        subprocess.run([*git, *args], cwd=work, check=True, capture_output=True)
    env = {**os.environ, "IMAGE": "ghcr.io/acme/rollout-verify", "DIGEST": DIGEST, "TAG": "v1.2.3",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "HOME": str(tmp_path)}  # fmt: skip
    for name in ("Pin action.yml to the image's digest", "Commit on releases/vMAJOR and move the tags to it"):
        done = subprocess.run(["bash", "-ec", _step("action", name)["run"]],
                              cwd=work, env=env, capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr

    def rev(ref: str) -> str:
        return subprocess.run(
            ["git", "rev-parse", ref], cwd=origin, capture_output=True, text=True
        ).stdout.strip()

    assert rev("refs/tags/v1.2.3^{commit}") == rev("refs/tags/v1^{commit}") == rev("refs/heads/releases/v1")
    assert rev("refs/heads/releases/v1^") == rev("refs/heads/main")  # one commit on top of the tagged one
    shown = subprocess.run(
        ["git", "show", "releases/v1:action.yml"], cwd=origin, capture_output=True, text=True
    ).stdout
    assert f"  image: docker://ghcr.io/acme/rollout-verify@{DIGEST}\n" in shown
