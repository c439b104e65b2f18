"""The kubelet's image manager (pkg/kubelet/images/image_manager.go EnsureImageExists): the
images a node holds, the pull policy, the pull itself against kubesim's registries
(node/registry.py) and the per-pod image back-off, with the kubelet's events and waiting
reasons (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..record import go_duration
from ..storage.store import Obj
from .containers import ContainerRuntime, PodRuntime
from .images import PUBLISHED, lookup, pull_policy
from .registry import InvalidReference, invalid_name_message, parse, pull_error

if TYPE_CHECKING:
    from ..knobs import Knobs

Event = Callable[[str, str, str], None]  # (type, reason, message) about the container
Waiting = Callable[[str, str], None]  # (reason, message): the container waits


class ImagePuller:
    """One node's images and image back-off."""

    def __init__(self, preloaded: tuple[str, ...] = ()) -> None:
        # images on the node, by normalised reference (`kind load docker-image` puts some there)
        self.images: set[str] = set()
        for image in preloaded:
            try:
                self.images.add(str(parse(image)))
            except InvalidReference:
                continue
        self.backoff: dict[str, tuple[float, float]] = {}  # pod uid + image -> (back-off, since)

    async def ensure(
        self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, *, knobs: Knobs, event: Event, waiting: Waiting
    ) -> bool:
        """True once the image is on the node; else the container waits (and the caller retries)."""
        image = crt.image
        loop = asyncio.get_running_loop()
        try:
            ref = parse(image)
        except InvalidReference as e:
            msg = invalid_name_message(image, e)
            event("Warning", "InspectFailed", msg)
            event("Warning", "Failed", "Error: InvalidImageName")
            waiting("InvalidImageName", msg)
            await asyncio.sleep(min(10.0, knobs.crashloop_backoff_initial))
            return False
        policy = pull_policy(image, c.get("imagePullPolicy"))
        present = str(ref) in self.images
        if policy == "Never" or (present and policy != "Always"):
            if present:
                event("Normal", "Pulled", f'Container image "{image}" already present on machine')
                return True
            msg = f'Container image "{image}" is not present with pull policy of Never'
            event("Warning", "ErrImageNeverPull", msg)
            event("Warning", "Failed", "Error: ErrImageNeverPull")
            waiting("ErrImageNeverPull", msg)
            await asyncio.sleep(min(10.0, knobs.crashloop_backoff_initial))
            return False
        key = f"{rt.uid}_{image}"
        backoff, at = self.backoff.get(key, (0.0, 0.0))
        if backoff and loop.time() - at < backoff:
            waiting("ImagePullBackOff", f'Back-off pulling image "{image}"')
            event("Normal", "BackOff", f'Back-off pulling image "{image}"')
            event("Warning", "Failed", "Error: ImagePullBackOff")
            await asyncio.sleep(max(0.0, min(at + backoff - loop.time(), 10.0)))
            return False
        event("Normal", "Pulling", f'Pulling image "{image}"')
        t0 = loop.time()
        err = pull_error(
            ref,
            published=PUBLISHED,
            reachable=knobs.registries,
            missing_markers=knobs.bad_image_markers,
            image=image,
        )
        if err is not None:
            event("Warning", "Failed", f'Failed to pull image "{image}": {err}')
            event("Warning", "Failed", "Error: ErrImagePull")
            step = (
                knobs.crashloop_backoff_initial
                if not backoff
                else min(backoff * 2, knobs.crashloop_backoff_max)
            )
            self.backoff[key] = (step, loop.time())
            waiting("ErrImagePull", err)
            await asyncio.sleep(min(1.0, step))
            return False
        self.images.add(str(ref))
        self.backoff.pop(key, None)
        took = go_duration(int((loop.time() - t0) * 1000) / 1000)
        size = lookup(image).size
        event(
            "Normal",
            "Pulled",
            f'Successfully pulled image "{image}" in {took} ({took} including waiting). Image size: {size} bytes.',
        )
        return True
