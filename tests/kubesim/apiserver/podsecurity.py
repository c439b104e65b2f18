"""Pod Security admission (staging/src/k8s.io/pod-security-admission): a namespace's
`pod-security.kubernetes.io/enforce|warn` labels (with `-version`) judge each pod against the
baseline or restricted level; enforce refuses with 403, warn adds a `Warning` header.

The checks kept are the ones a pod or a debug container meets in practice, with upstream's
texts (policy/check_*.go), in upstream's order (baseline checks, then restricted ones):
capabilities_baseline, hostNamespaces, privileged; allowPrivilegeEscalation,
capabilities_restricted, runAsNonRoot, runAsUser, seccompProfile_restricted. Every container
type counts: containers, init containers and ephemeral containers (podutil.VisitContainers),
which is why adding a debug container that would run as root to a pod in a restricted namespace
is refused, as `kubectl debug` users meet it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..storage.errors import ApiError
from ..storage.store import Obj

LABEL = "pod-security.kubernetes.io/"
LEVELS = ("privileged", "baseline", "restricted")
# the capabilities a baseline pod may add (check_capabilities_baseline.go)
BASELINE_CAPS = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}

Check = Callable[[Obj, list[Obj]], str | None]


def _quote(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _containers(names: list[str]) -> str:
    return ("container " if len(names) == 1 else "containers ") + _quote(names)


def _sc(c: Obj) -> Obj:
    return c.get("securityContext") or {}


def _caps_baseline(pod: Obj, cs: list[Obj]) -> str | None:
    bad: list[str] = []
    added: list[str] = []
    for c in cs:
        extra = [a for a in (_sc(c).get("capabilities") or {}).get("add") or [] if a not in BASELINE_CAPS]
        if extra:
            bad.append(c["name"])
            added += [a for a in extra if a not in added]
    if not bad:
        return None
    return f"non-default capabilities ({_containers(bad)} must not include {_quote(added)} in securityContext.capabilities.add)"


def _host_namespaces(pod: Obj, cs: list[Obj]) -> str | None:
    spec = pod["spec"]
    on = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    return f"host namespaces ({', '.join(on)})" if on else None


def _privileged(pod: Obj, cs: list[Obj]) -> str | None:
    bad = [c["name"] for c in cs if _sc(c).get("privileged")]
    return f"privileged ({_containers(bad)} must not set securityContext.privileged=true)" if bad else None


def _escalation(pod: Obj, cs: list[Obj]) -> str | None:
    bad = [c["name"] for c in cs if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return f"allowPrivilegeEscalation != false ({_containers(bad)} must set securityContext.allowPrivilegeEscalation=false)"


def _caps_restricted(pod: Obj, cs: list[Obj]) -> str | None:
    no_drop = [c["name"] for c in cs if "ALL" not in ((_sc(c).get("capabilities") or {}).get("drop") or [])]
    bad_add: list[str] = []
    added: list[str] = []
    for c in cs:
        extra = [a for a in (_sc(c).get("capabilities") or {}).get("add") or [] if a != "NET_BIND_SERVICE"]
        if extra:
            bad_add.append(c["name"])
            added += [a for a in extra if a not in added]
    parts = []
    if no_drop:
        parts.append(f'{_containers(no_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if bad_add:
        parts.append(
            f"{_containers(bad_add)} must not include {_quote(added)} in securityContext.capabilities.add"
        )
    return f"unrestricted capabilities ({'; '.join(parts)})" if parts else None


def _non_root(pod: Obj, cs: list[Obj]) -> str | None:
    pod_sc = pod["spec"].get("securityContext") or {}
    setters = ["pod"] if pod_sc.get("runAsNonRoot") is False else []
    explicit = [c["name"] for c in cs if _sc(c).get("runAsNonRoot") is False]
    if explicit:
        setters.append(_containers(explicit))
    if setters:
        return (
            f"runAsNonRoot != true ({' and '.join(setters)} must not set securityContext.runAsNonRoot=false)"
        )
    if pod_sc.get("runAsNonRoot") is True:
        return None
    implicit = [c["name"] for c in cs if _sc(c).get("runAsNonRoot") is not True]
    if not implicit:
        return None
    return f"runAsNonRoot != true (pod or {_containers(implicit)} must set securityContext.runAsNonRoot=true)"


def _run_as_user(pod: Obj, cs: list[Obj]) -> str | None:
    setters = ["pod"] if (pod["spec"].get("securityContext") or {}).get("runAsUser") == 0 else []
    bad = [c["name"] for c in cs if _sc(c).get("runAsUser") == 0]
    if bad:
        setters.append(_containers(bad))
    return f"runAsUser=0 ({' and '.join(setters)} must not set runAsUser=0)" if setters else None


def _seccomp(pod: Obj, cs: list[Obj]) -> str | None:
    ok = ("RuntimeDefault", "Localhost")
    pod_type = ((pod["spec"].get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    if pod_type is not None and pod_type not in ok:
        return f'seccompProfile (pod must not set securityContext.seccompProfile.type to "{pod_type}")'
    bad = [
        c["name"]
        for c in cs
        if (_sc(c).get("seccompProfile") or {}).get("type") not in ok
        and not (pod_type in ok and (_sc(c).get("seccompProfile") or {}).get("type") is None)
    ]
    if not bad:
        return None
    return (
        f"seccompProfile (pod or {_containers(bad)} must set securityContext.seccompProfile.type to "
        '"RuntimeDefault" or "Localhost")'
    )


CHECKS: dict[str, tuple[Check, ...]] = {
    "privileged": (),
    "baseline": (_caps_baseline, _host_namespaces, _privileged),
    "restricted": (
        _host_namespaces,
        _privileged,
        _escalation,
        _caps_restricted,
        _non_root,
        _run_as_user,
        _seccomp,
    ),
}


def violations(level: str, pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    cs = [
        c
        for field in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(field) or []
        if isinstance(c, dict)
    ]
    out = []
    for check in CHECKS.get(level, ()):
        found = check(pod, cs)
        if found:
            out.append(found)
    return out


def _level(labels: dict[str, Any], mode: str) -> tuple[str, str] | None:
    level = labels.get(LABEL + mode)
    if level not in LEVELS or level == "privileged":
        return None
    return str(level), str(labels.get(f"{LABEL}{mode}-version") or "latest")


def enforce(namespace: Obj | None, pod: Obj, *, name: str) -> list[str]:
    """Judge `pod` under its namespace's labels: raises the 403 of `enforce`, returns the
    warnings of `warn` (`would violate PodSecurity "restricted:latest": ...`)."""
    labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
    enforced = _level(labels, "enforce")
    if enforced is not None:
        found = violations(enforced[0], pod)
        if found:
            raise ApiError(
                403,
                "Forbidden",
                f'pods "{name}" is forbidden: violates PodSecurity "{enforced[0]}:{enforced[1]}": '
                + ", ".join(found),
                {"name": name, "kind": "pods"},
            )
    return _warn_only(namespace, pod)


# workload kinds whose pod template Pod Security judges, with warnings only (a real cluster then
# refuses their pods when the controller creates them; kubesim's controllers create pods without
# admission, so that refusal is not emulated)
TEMPLATED = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"}


def admit_create(namespace: Obj | None, kind: str, obj: Obj) -> list[str]:
    """A create through the API: a Pod is judged as `enforce` says (403) with `warn`'s warnings;
    a workload's pod template gets the `warn` level's warning."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    if kind == "Pod":
        return enforce(namespace, obj, name=name)
    if kind in TEMPLATED:
        return _warn_only(namespace, ((obj.get("spec") or {}).get("template")) or {})
    return []


def _warn_only(namespace: Obj | None, pod: Obj) -> list[str]:
    labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
    warned = _level(labels, "warn")
    if warned is None:
        return []
    found = violations(warned[0], pod)
    return [f'would violate PodSecurity "{warned[0]}:{warned[1]}": ' + ", ".join(found)] if found else []
