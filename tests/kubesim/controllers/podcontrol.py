"""Creating a controller's pods through the API's admission, as kubernetes/kubernetes
pkg/controller/controller_utils.go RealPodControl.CreatePods does for the ReplicaSet, DaemonSet
and Job controllers: the pod is sent with `generateName` (the apiserver names it), a refusal is
the Warning event `FailedCreate` "Error creating: <the API's message>" on the owner, a success
the Normal event `SuccessfulCreate` "Created pod: NAME".

A refused owner is tried again with its workqueue's per-item exponential back-off
(workqueue.DefaultControllerRateLimiter: 5 ms doubling to 1000 s), not at every resync."""

from __future__ import annotations

import time

from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store

PODS = BY_PATH[("", "pods")]
BASE_DELAY, MAX_DELAY = 0.005, 1000.0


class PodControl:
    def __init__(self, store: Store, recorder: Recorder) -> None:
        self.store = store
        self.recorder = recorder
        self.failures: dict[str, tuple[int, float]] = {}  # owner uid -> (failures, retry after)

    def may_create(self, owner: Obj) -> bool:
        """False while the owner's last refusal's back-off lasts."""
        held = self.failures.get(owner["metadata"]["uid"])
        return held is None or time.monotonic() >= held[1]

    def create(self, owner: Obj, pod: Obj) -> Obj | ApiError:
        """Create `pod` (its metadata.generateName set) for `owner`; the stored pod, or the refusal."""
        ref = object_ref(owner, kind=owner["kind"], api_version=owner["apiVersion"])
        try:
            made = self.store.create(PODS, owner["metadata"]["namespace"], pod)
        except ApiError as e:
            self.refused(owner)
            self.recorder.event(ref, "Warning", "FailedCreate", f"Error creating: {e.message}")
            return e
        self.failures.pop(owner["metadata"]["uid"], None)
        self.recorder.event(ref, "Normal", "SuccessfulCreate", f"Created pod: {made['metadata']['name']}")
        return made

    def refused(self, owner: Obj) -> None:
        """One more refusal: the owner waits twice as long before the next try."""
        uid = owner["metadata"]["uid"]
        n = self.failures.get(uid, (0, 0.0))[0]
        self.failures[uid] = (n + 1, time.monotonic() + min(BASE_DELAY * 2**n, MAX_DELAY))
