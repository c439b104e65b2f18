"""Image pulls that can fail (node/registry.py, node/puller.py after the kubelet's
pkg/kubelet/images/image_manager.go EnsureImageExists): kubesim's registries hold their
repositories with every tag (`python`, `nginx:1.21.4` pull); a tag meant to be missing
(`doesnotexist`), an unknown Docker Hub repository or an unreachable registry is ErrImagePull
then ImagePullBackOff with containerd's texts, so such a rollout never completes; pull policy
Never without the image is ErrImageNeverPull. Judged by the real kubectl."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.kubesim.node.images import PUBLISHED
from tests.kubesim.node.registry import InvalidReference, parse, pull_error
from tests.support.helpers import REPO, deployment
from tests.support.kubectl import Kubectl


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(
        sync_period=1.0,
        crashloop_backoff_initial=1.0,
        crashloop_backoff_max=4.0,
        registries=("registry.corp.example:5000",),
        node_images=("example.com/preloaded/tool:1",),
    )


def pull(image: str, reachable: tuple[str, ...] = ()) -> str | None:
    return pull_error(
        parse(image), published=PUBLISHED, reachable=reachable, missing_markers=("doesnotexist",), image=image
    )


def test_references_are_normalised_as_docker_does() -> None:
    assert str(parse("busybox")) == "docker.io/library/busybox:latest"
    assert str(parse("nginx:1.27")) == "docker.io/library/nginx:1.27"
    assert str(parse("example/crashloop:1")) == "docker.io/example/crashloop:1"
    assert str(parse("localhost:5000/app")) == "localhost:5000/app:latest"
    assert str(parse("index.docker.io/library/debian:bookworm")) == "docker.io/library/debian:bookworm"
    digest = "sha256:" + "a" * 64
    assert str(parse(f"gcr.io/distroless/static@{digest}")) == f"gcr.io/distroless/static@{digest}"
    with pytest.raises(InvalidReference, match=r"repository name \(library/Nginx\) must be lowercase"):
        parse("Nginx:1.27")
    with pytest.raises(InvalidReference, match="invalid reference format"):
        parse("nginx:bad tag")


def test_every_tag_of_a_known_repository_pulls_and_missing_tags_and_unknown_registries_fail() -> None:
    assert pull("busybox:1.36") is None and pull("nginx") is None and pull("debian:bookworm") is None
    assert pull("nginx:1.21.4") is None and pull("python") is None and pull("python:3.12-slim") is None
    assert pull("nginx:1.27-doesnotexist") == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.27-doesnotexist": '
        'failed to resolve reference "docker.io/library/nginx:1.27-doesnotexist": '
        "docker.io/library/nginx:1.27-doesnotexist: not found"
    )
    assert pull("ngnix:1.27") == (
        'rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/ngnix:1.27": '
        'failed to resolve reference "docker.io/library/ngnix:1.27": pull access denied, repository does '
        "not exist or may require authorization: server message: insufficient_scope: authorization failed"
    )
    assert pull("registry.example.com/team/app:1") == (
        'rpc error: code = Unknown desc = failed to pull and unpack image "registry.example.com/team/app:1": '
        'failed to resolve reference "registry.example.com/team/app:1": failed to do request: Head '
        '"https://registry.example.com/v2/team/app/manifests/1": dial tcp: lookup registry.example.com '
        "on 127.0.0.53:53: no such host"
    )
    assert pull("registry.example.com/team/app:1", ("registry.example.com",)) is None  # the knob
    assert pull("registry.local/doesnotexist:1", ("registry.local",)) is not None  # the fault marker


# images tests name because they must not pull (besides names holding a bad-image marker)
MEANT_TO_FAIL = {
    "ngnix:1.27",  # an unknown Docker Hub repository
    "registry.example.com/team/app:1",  # a registry nobody runs
    "registry.corp.example:5000/team/app:7",  # reachable only through Knobs.registries
    "example.com/preloaded/tool:1",  # on the nodes only through Knobs.node_images
    "Busybox:1.36",  # an invalid name
    # the docs' stand-ins for the image you build and push yourself (docs/build-your-own-image.md)
    "registry.example.com/platform/rollout-verify",
    "registry.example.com/platform/rollout-verify@sha256",
}


def _images_named_in_the_repository() -> set[str]:
    """Every image a test, benchmark, the demo, an example, the README or the docs name."""
    pattern = re.compile(
        r"""(?:["']image["']\s*:\s*|\bimage(?::\s*str)?\s*=\s*|--image[= ]|\bimage:\s+)["']?([a-z0-9][\w./:@-]*[\w])"""
    )
    found: set[str] = set()
    # tests/unit runs no pods (its image names are release artefacts, not what a pod pulls)
    roots = [REPO / "tests" / d for d in ("kubesim", "e2e", "support", "manifests")]
    roots += [REPO / "tests" / "conftest.py", REPO / "bench", REPO / "examples", REPO / "README.md"]
    roots += [REPO / "docs"]
    files = [p for r in roots for p in ([r] if r.is_file() else r.rglob("*")) if p.is_file()]
    for path in files:
        if path.suffix not in (".py", ".yaml", ".yml", ".md"):
            continue
        for m in pattern.finditer(path.read_text(errors="replace")):
            image = m.group(1)
            if "://" in image:  # `docker://…`: a GitHub Action's image, never a pod's
                continue
            if ":" in image or "/" in image or image in ("busybox", "nginx", "debian"):
                found.add(image)
    return found


def test_every_image_the_tests_demo_benchmarks_and_docs_name_pulls() -> None:
    """Register a new image in images.PUBLISHED; a name meant to fail holds a bad-image marker
    or is listed in MEANT_TO_FAIL."""
    images = _images_named_in_the_repository()
    assert {"busybox:1.36", "kubesim.local/configapp:1", "registry.local/app:1"} <= images
    failing = {}
    for image in sorted(images):
        try:
            err = pull(image)
        except InvalidReference as e:
            err = str(e)
        meant = image in MEANT_TO_FAIL or any(m in image for m in Knobs().bad_image_markers)
        if err is not None and not meant:
            failing[image] = err
    assert not failing, f"images that would not pull on kubesim: {sorted(failing)}"


def _container(cluster: Cluster, app: str) -> dict[str, Any]:
    pods = [p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == app]
    return ((pods[0].get("status") or {}).get("containerStatuses") or [{}])[0] if pods else {}


def _waiting(cluster: Cluster, app: str) -> str:
    return str(((_container(cluster, app).get("state") or {}).get("waiting") or {}).get("reason", ""))


def test_a_missing_tag_is_err_image_pull_then_image_pull_back_off_and_the_rollout_never_completes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("typo", replicas=1, image="nginx:doesnotexist"))
    cluster.wait_for(lambda: _waiting(cluster, "typo") == "ErrImagePull", timeout=30, what="ErrImagePull")
    cluster.wait_for(
        lambda: _waiting(cluster, "typo") == "ImagePullBackOff", timeout=30, what="ImagePullBackOff"
    )
    state = _container(cluster, "typo")["state"]["waiting"]
    assert state["message"] == 'Back-off pulling image "nginx:doesnotexist"'
    out = kubectl.run("rollout", "status", "deployment/typo", "--timeout=3s", check=False)
    assert out.returncode != 0 and "timed out waiting" in out.stderr
    events = json.loads(kubectl("get", "events", "-o", "json"))["items"]
    failed = [e["message"] for e in events if e["reason"] == "Failed"]
    assert any(
        m.startswith('Failed to pull image "nginx:doesnotexist": rpc error: code = NotFound') for m in failed
    ), failed
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed
    # the kubelet retries when the back-off ends (ErrImagePull again): wait for kubectl to show the back-off
    cluster.wait_for(
        lambda: "ImagePullBackOff" in kubectl("get", "pods", "-l", "app=typo"), timeout=60, what="kubectl's column"
    )


def test_a_registry_nobody_runs_fails_its_lookup_and_one_the_knob_lists_pulls(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("private", replicas=1, image="registry.example.com/team/app:1"))
    cluster.apply(deployment("corp", replicas=1, image="registry.corp.example:5000/team/app:7"))
    cluster.wait_for(lambda: _waiting(cluster, "private") == "ErrImagePull", timeout=30, what="ErrImagePull")
    assert (
        "lookup registry.example.com on 127.0.0.53:53: no such host"
        in (_container(cluster, "private")["state"]["waiting"]["message"])
    )
    cluster.wait_rollout("corp", timeout=60)  # Knobs.registries: reachable, it holds any tag


def test_pull_policy_never_runs_only_what_the_node_already_holds(cluster: Cluster, kubectl: Kubectl) -> None:
    never = deployment("never", replicas=1, image="busybox:1.36", command=["sleep", "3600"])
    never["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Never"
    loaded = deployment("loaded", replicas=1, image="example.com/preloaded/tool:1", command=["sleep", "3600"])
    loaded["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Never"
    cluster.apply(never)
    cluster.apply(loaded)
    cluster.wait_for(
        lambda: _waiting(cluster, "never") == "ErrImageNeverPull", timeout=30, what="ErrImageNeverPull"
    )
    assert _container(cluster, "never")["state"]["waiting"]["message"] == (
        'Container image "busybox:1.36" is not present with pull policy of Never'
    )
    cluster.wait_rollout("loaded", timeout=60)  # Knobs.node_images: on every node at boot
    shown = kubectl("get", "events", "--field-selector", "reason=ErrImageNeverPull")
    assert 'Container image "busybox:1.36" is not present with pull policy of Never' in shown
    pulled = kubectl("get", "events", "--field-selector", "reason=Pulled")
    assert 'Container image "example.com/preloaded/tool:1" already present on machine' in pulled


def test_an_image_name_the_kubelet_cannot_parse_is_invalid_image_name(cluster: Cluster) -> None:
    cluster.apply(deployment("upper", replicas=1, image="Busybox:1.36"))
    cluster.wait_for(
        lambda: _waiting(cluster, "upper") == "InvalidImageName", timeout=30, what="InvalidImageName"
    )
    assert _container(cluster, "upper")["state"]["waiting"]["message"] == (
        'Failed to apply default image tag "Busybox:1.36": couldn\'t parse image name "Busybox:1.36": '
        "invalid reference format: repository name (library/Busybox) must be lowercase"
    )
