"""The kubelet's volume manager: mounts a pod's volumes before its containers start and refreshes
the projected ones (ConfigMap, Secret, downward API, token) every sync period, as
pkg/kubelet/volumemanager does; subPath copies are the runtime's and never refresh."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .claims import claim_dir
from .secretsstore import is_secrets_store
from .volumes import MountError, atomic_write, volume_files

if TYPE_CHECKING:
    from .containers import PodRuntime
    from .kubelet import Kubelet


class VolumeManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet  # its object cache is replaced when it restarts: read it each time

    def setup(self, rt: PodRuntime) -> None:
        """Mount every volume of the pod; MountError (naming the volume) when one cannot be."""
        for v in rt.pod["spec"].get("volumes") or []:
            if "persistentVolumeClaim" in v:
                cluster = self.kubelet.cluster
                rt.volumes[v["name"]] = claim_dir(cluster.store, rt.pod, v, cluster.root)
                continue
            d = rt.dir / "volumes" / v["name"]
            d.mkdir(parents=True, exist_ok=True)
            try:
                files = volume_files(self.kubelet.cache, rt.pod, v, token=self.kubelet.tokens.token)
                if files is not None:
                    atomic_write(d, files)
                elif is_secrets_store(v):
                    self.kubelet.csi.mount(rt, v, d)
            except MountError as e:
                e.volume = v["name"]
                raise
            rt.volumes[v["name"]] = d

    def refresh(self, pods: Iterable[PodRuntime]) -> None:
        """Rewrite the projected volumes of the running pods with what the cache holds now."""
        for rt in list(pods):
            if rt.stopping:
                continue
            for v in rt.pod["spec"].get("volumes") or []:
                d = rt.volumes.get(v["name"])
                if d is None:
                    continue
                with contextlib.suppress(MountError):
                    files = volume_files(self.kubelet.cache, rt.pod, v, token=self.kubelet.tokens.token)
                    if files is not None:
                        atomic_write(d, files)
