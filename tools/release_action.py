"""`python -m tools.release_action --image ghcr.io/OWNER/REPO --digest sha256:… [--file action.yml]`:
point the released action.yml at the published image by digest.

On `main`, action.yml builds the Dockerfile (`runs.image: Dockerfile`); a released action runs
`docker://IMAGE@sha256:…`, so each job pulls the image it was tested with instead of building one
(and runners that cannot build, as Actions Runner Controller in Kubernetes mode, can run it). The
release workflow (.github/workflows/release.yml) runs this between the image push and the release
commit. Standard library only: that job has a bare Python.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# registry/path: lower-case, as OCI references must be; no tag, no digest (the digest is added)
_IMAGE = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)+")
# the one `image:` line of `runs:` (two-space indent under it), as main carries it
_RUNS_IMAGE = re.compile(r"^(  image:[ \t]*)(\S.*)$", re.M)


class ReleaseError(ValueError):
    """The arguments or action.yml cannot make a pinned action."""


def pinned_reference(*, image: str, digest: str) -> str:
    """`docker://IMAGE@DIGEST`, refusing anything that is not a lower-case name and a sha256 digest."""
    if not _IMAGE.fullmatch(image):
        raise ReleaseError(f"--image {image!r} is not a lower-case registry/path without tag or digest")
    if not _DIGEST.fullmatch(digest):
        raise ReleaseError(f"--digest {digest!r} is not sha256:<64 lower-case hex digits>")
    return f"docker://{image}@{digest}"


def pin(*, action: str, image: str, digest: str) -> str:
    """action.yml's text with `runs.image` replaced by the pinned reference; the rest unchanged."""
    runs = action.find("\nruns:\n")
    if runs < 0:
        raise ReleaseError("action.yml has no top-level `runs:` block")
    head, body = action[: runs + 7], action[runs + 7 :]
    end = re.search(r"^\S", body, re.M)  # the next top-level key, if any
    block, tail = (body[: end.start()], body[end.start() :]) if end else (body, "")
    found = _RUNS_IMAGE.findall(block)
    if len(found) != 1:
        raise ReleaseError(f"action.yml's `runs:` has {len(found)} `image:` lines; expected 1")
    if found[0][1].strip() != "Dockerfile":
        raise ReleaseError(f"action.yml already names an image ({found[0][1].strip()}): pin it from main")
    reference = pinned_reference(image=image, digest=digest)
    return head + _RUNS_IMAGE.sub(lambda m: m.group(1) + reference, block) + tail


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.release_action", allow_abbrev=False)
    parser.add_argument("--image", required=True, help="e.g. ghcr.io/owner/rollout-verify")
    parser.add_argument("--digest", required=True, help="the pushed index's sha256:… digest")
    parser.add_argument("--file", default="action.yml", type=Path)
    args = parser.parse_args(argv)
    try:
        args.file.write_text(pin(action=args.file.read_text(), image=args.image, digest=args.digest))
    except (ReleaseError, OSError) as e:
        print(f"release_action: error: {e}", file=sys.stderr)
        return 2
    print(f"release_action: {args.file} runs {pinned_reference(image=args.image, digest=args.digest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
