"""tools/release_action.py: the released action.yml names the pushed image by digest, or nothing
is written."""

from __future__ import annotations

from pathlib import Path

import pytest

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
