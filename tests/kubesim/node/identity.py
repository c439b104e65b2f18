"""Who a container's process is: its user and group, and the kubelet's runAsNonRoot check.

The runtime runs the process as `runAsUser`/`runAsGroup` (the container's securityContext over
the pod's), else as the image's USER; without a group, the user's primary group from the image's
/etc/passwd (0 when the user is not in it), as containerd's WithUser/WithUserID does. With
`runAsNonRoot` the kubelet refuses to create a container that would run as root
(pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot), a
CreateContainerConfigError with its text."""

from __future__ import annotations

from ..storage.store import Obj
from .environment import ConfigError
from .images import Image


def _field(pod: Obj, c: Obj, name: str) -> object:
    own = (c.get("securityContext") or {}).get(name)
    return own if own is not None else (pod["spec"].get("securityContext") or {}).get(name)


def run_as(pod: Obj, c: Obj, img: Image) -> tuple[int, int]:
    """(uid, gid) of the container's process; ConfigError when runAsNonRoot forbids it."""
    user = _field(pod, c, "runAsUser")
    uid = int(user) if isinstance(user, int) else img.user
    group = _field(pod, c, "runAsGroup")
    gid = int(group) if isinstance(group, int) else (uid if uid in img.passwd and uid else 0)
    if _field(pod, c, "runAsNonRoot") is True and uid == 0:
        meta = pod["metadata"]
        who = f'(pod: "{meta["name"]}_{meta.get("namespace", "")}({meta.get("uid", "")})", container: {c["name"]})'
        if isinstance(user, int):
            raise ConfigError(f"container's runAsUser breaks non-root policy {who}")
        raise ConfigError(f"container has runAsNonRoot and image will run as root {who}")
    return uid, gid


def read_only_root(c: Obj) -> bool:
    return bool((c.get("securityContext") or {}).get("readOnlyRootFilesystem"))


# containerd's default capability set (pkg/oci/spec.go populateDefaultUnixSpec)
DEFAULT_CAPS = (
    "chown",
    "dac_override",
    "fsetid",
    "fowner",
    "mknod",
    "net_raw",
    "setgid",
    "setuid",
    "setfcap",
    "setpcap",
    "net_bind_service",
    "sys_chroot",
    "kill",
    "audit_write",
)


def bounding_set(c: Obj) -> str:
    """setpriv's --bounding-set for the container: the runtime's default capabilities with the
    securityContext's `capabilities.add`/`drop` applied (`ALL` drops every one); empty for a
    privileged container, which keeps all of them. So a root debugger without SYS_PTRACE cannot
    read another user's /proc/PID/environ, as in a real container."""
    sc = c.get("securityContext") or {}
    if sc.get("privileged"):
        return ""
    caps = sc.get("capabilities") or {}
    drop = {str(x).lower().removeprefix("cap_") for x in caps.get("drop") or []}
    keep = [] if "all" in drop else [x for x in DEFAULT_CAPS if x not in drop]
    for x in caps.get("add") or []:
        name = str(x).lower().removeprefix("cap_")
        if name not in keep:
            keep.append(name)
    return ",".join(["-all", *(f"+{x}" for x in keep)])
