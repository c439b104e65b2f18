"""Report files owned by the GitHub workspace's owner. GitHub runs a container action as root and
mounts the runner's folders into it, so what the step writes there would belong to root: on a
self-hosted runner the next job's checkout, or the runner's cleanup of `_temp`, cannot remove it
(actions/runner#434). Running as root in a GitHub job, every file and folder the run creates is
given the uid/gid of `GITHUB_WORKSPACE`, as if the runner's user had written it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Owner:
    uid: int
    gid: int


def workspace_owner(*, environ: Mapping[str, str]) -> Owner | None:
    """The workspace's owner when files written as this process would belong to someone else:
    on GitHub, as root, with a workspace owned by another user. None otherwise."""
    workspace = environ.get("GITHUB_WORKSPACE", "")
    if environ.get("GITHUB_ACTIONS") != "true" or not workspace or os.geteuid() != 0:
        return None
    try:
        st = os.stat(workspace)
    except OSError:
        return None
    if st.st_uid == 0 and st.st_gid == 0:
        return None  # a root-owned workspace: files written as root already match it
    return Owner(uid=st.st_uid, gid=st.st_gid)


def missing_folders(path: str) -> list[str]:
    """The folders above `path` that do not exist yet, outermost first: the ones a write creates."""
    missing: list[str] = []
    folder = os.path.dirname(os.path.abspath(path))
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return missing[::-1]


def hand_over(*, paths: Iterable[str], owner: Owner) -> None:
    """Give `paths` to `owner` (links are not followed: a file the run did not write stays as it is)."""
    for path in paths:
        os.chown(path, owner.uid, owner.gid, follow_symlinks=False)
