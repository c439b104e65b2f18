"""Which images a pull finds, offline: the catalogue-or-registry rule, and the runtime's texts
when a pull fails.

Nobody can know offline which images exist, so kubesim's registries hold exactly the
repositories of `images.PUBLISHED` (the images its tests, docs, demo and benchmarks name), each
with every syntactically valid tag (as a registry serves every tag it was pushed). A pull of
anything else fails as containerd 1.7 fails it on a real node:
- a registry host nobody runs here: the DNS lookup fails (`dial tcp: lookup HOST ...: no such
  host`), unless `Knobs.registries` lists the host as reachable, in which case it holds every
  repository and tag asked of it (a test's private registry);
- Docker Hub without the repository: `pull access denied, repository does not exist or may
  require authorization`;
- a tag meant to be missing (holding one of `Knobs.bad_image_markers`, e.g. `doesnotexist`),
  wherever it is: `REF: not found`.

References are normalised as docker's distribution/reference (normalize.go
ParseNormalizedNamed) does: `busybox` is `docker.io/library/busybox:latest`.
Pure logic: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DOCKER_HUB = "docker.io"
# distribution/reference regexp.go: path components, tags, digests
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_DOMAIN = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?\.?)+(?::[0-9]+)?|\[[0-9a-fA-F:]+\](?::[0-9]+)?"
)
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")


@dataclass(frozen=True)
class Reference:
    """A normalised image reference: `docker.io/library/busybox` + tag `1.36`."""

    domain: str
    path: str  # `library/busybox`
    tag: str  # `latest` when neither tag nor digest was given
    digest: str = ""

    @property
    def repository(self) -> str:
        return f"{self.domain}/{self.path}"

    def __str__(self) -> str:
        """containerd's spelling of the reference in its errors."""
        out = self.repository
        if self.tag:
            out += f":{self.tag}"
        return out + (f"@{self.digest}" if self.digest else "")


class InvalidReference(ValueError):
    """distribution/reference's `invalid reference format` (the kubelet's InvalidImageName)."""


def parse(image: str) -> Reference:
    """ParseNormalizedNamed + the kubelet's applyDefaultImageTag (`latest` when untagged)."""
    name, _, digest = image.partition("@")
    if digest and not _DIGEST.fullmatch(digest):
        raise InvalidReference("invalid reference format")
    tag = ""
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
        if not _TAG.fullmatch(tag):
            raise InvalidReference("invalid reference format")
    first, sep, rest = name.partition("/")
    if sep and (any(ch in first for ch in ".:") or first == "localhost" or first.lower() != first):
        domain, path = first, rest
        if not _DOMAIN.fullmatch(domain):
            raise InvalidReference("invalid reference format")
    else:
        domain, path = DOCKER_HUB, name
    if domain == "index.docker.io":
        domain = DOCKER_HUB
    if domain == DOCKER_HUB and "/" not in path:
        path = "library/" + path
    if not path or not all(_COMPONENT.fullmatch(c) for c in path.split("/")):
        if path.lower() != path and all(_COMPONENT.fullmatch(c) for c in path.lower().split("/")):
            raise InvalidReference(f"invalid reference format: repository name ({path}) must be lowercase")
        raise InvalidReference("invalid reference format")
    return Reference(domain, path, tag or ("" if digest else "latest"), digest)


def invalid_name_message(image: str, err: InvalidReference) -> str:
    """EnsureImageExists' text for a name applyDefaultImageTag cannot parse (InvalidImageName)."""
    return f'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": {err}'


def pull_error(
    ref: Reference,
    *,
    published: frozenset[str],
    reachable: tuple[str, ...],
    missing_markers: tuple[str, ...],
    image: str,
) -> str | None:
    """None if the pull succeeds, else the CRI error the kubelet reports (`rpc error: ...`) for
    `ref` (the container's `image` as written, for the fault markers)."""
    full = str(ref)
    head = f'failed to pull and unpack image "{full}": failed to resolve reference "{full}": '
    not_found = f"rpc error: code = NotFound desc = {head}{full}: not found"
    if any(m in image for m in missing_markers):
        return not_found
    if ref.domain in reachable:
        return None
    if ref.repository in published:
        return None
    if ref.domain == DOCKER_HUB:
        return (
            f"rpc error: code = Unknown desc = {head}pull access denied, repository does not exist or "
            "may require authorization: server message: insufficient_scope: authorization failed"
        )
    if any(r.startswith(ref.domain + "/") for r in published):
        return not_found  # a registry that exists, without that repository
    host = ref.domain.rsplit(":", 1)[0] if not ref.domain.startswith("[") else ref.domain
    manifest = ref.digest or ref.tag
    return (
        f"rpc error: code = Unknown desc = {head}failed to do request: Head "
        f'"https://{ref.domain}/v2/{ref.path}/manifests/{manifest}": dial tcp: lookup {host} on '
        "127.0.0.53:53: no such host"
    )
