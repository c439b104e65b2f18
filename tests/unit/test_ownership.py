"""When report files are handed to the workspace's owner, and which folders a write creates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verify.platforms.ownership import Owner, missing_folders, workspace_owner

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the tests run as root, as CI does")


def github(workspace: Path) -> dict[str, str]:
    return {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace)}


def test_as_root_in_a_github_job_files_go_to_the_workspaces_owner(tmp_path: Path) -> None:
    os.chown(tmp_path, 1001, 121)
    assert workspace_owner(environ=github(tmp_path)) == Owner(uid=1001, gid=121)


def test_a_workspace_root_owns_needs_no_hand_over(tmp_path: Path) -> None:
    os.chown(tmp_path, 0, 0)
    assert workspace_owner(environ=github(tmp_path)) is None


def test_outside_github_or_without_a_workspace_nothing_is_handed_over(tmp_path: Path) -> None:
    os.chown(tmp_path, 1001, 121)
    assert workspace_owner(environ={"GITHUB_WORKSPACE": str(tmp_path)}) is None
    assert workspace_owner(environ={"GITHUB_ACTIONS": "true"}) is None
    assert workspace_owner(environ=github(tmp_path / "gone")) is None


def test_missing_folders_are_the_ones_a_write_creates_outermost_first(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert missing_folders(str(tmp_path / "a" / "b" / "c" / "f.json")) == [
        str(tmp_path / "a" / "b"),
        str(tmp_path / "a" / "b" / "c"),
    ]
    assert missing_folders(str(tmp_path / "a" / "f.json")) == []
