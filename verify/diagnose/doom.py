"""Whether a waiting rollout can still complete: the states of a pod of the new revision that no
amount of waiting heals, only a change to the spec ("doom", as Shopify's krane calls it). Pure:
the pods', events' and workload's JSON in, verdicts out.

The reasons are the kubelet's and the scheduler's own words:
- kubernetes pkg/kubelet/images/types.go: InvalidImageName, ErrImageNeverPull, ErrImagePull and
  ImagePullBackOff; image_manager.go records each failed pull as a `Failed` event `Failed to pull
  image "IMG": ERR` (the runtime's error), which is how two consecutive attempts are counted;
- pkg/kubelet/container/sync_result.go: CreateContainerError, RunContainerError and
  CrashLoopBackOff; containerd reports a program it cannot find as a `StartError` termination
  (exit code 128, `exec: "x": executable file not found in $PATH`);
- pkg/scheduler/framework/types.go FitError.Error(): `0/N nodes are available: <count reason>,
  .... preemption: ...`, each reason a Filter plugin's (nodeaffinity ErrReasonPod, tainttoleration
  `node(s) had untolerated taint {k: v}`, noderesources `Insufficient cpu`, ...);
- the ReplicaSet controller's `FailedCreate` (the Deployment's ReplicaFailure condition): the API
  server's refusal, e.g. staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/
  controller.go `exceeded quota: Q, requested: R, used: U, limited: L`, Pod Security's
  `violates PodSecurity "restricted:latest": ...`, a webhook's `admission webhook "w" denied the
  request: ...`.

A missing Secret, ConfigMap or key (CreateContainerConfigError) is never doom: Secrets Store CSI
and ExternalSecrets may sync it a moment later, and the kubelet then starts the container. The
same reason for runAsNonRoot with an image that runs as root is: nothing can appear to mend it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from verify.kube.objects import integer, mapping, maps, text

CRASH_LOOP_RESTARTS = 3  # CrashLoopBackOff with this many restarts is a crash, not a slow start
PULL_ATTEMPTS = 2  # a pull failing for good on this many consecutive attempts
_MAX_MESSAGE = 300

# a pull the registry answered, for good: the tag or repository does not exist, or the node may
# not read it (containerd: `...: not found`, `manifest unknown`, Docker Hub's `pull access denied,
# repository does not exist or may require authorization`, `401 Unauthorized`); a DNS failure,
# a timeout or `toomanyrequests` may pass
_PULL_FOR_GOOD = re.compile(
    r"(?i):\s*not found\b|manifest unknown|\bunauthorized\b|pull access denied|insufficient_scope"
)
# the runtime cannot find the program to run (containerd/runc's texts) or there is none
_NO_PROGRAM = re.compile(
    r"(?i)executable file not found|exec: \"[^\"]*\": (?:stat [^:]*: )?no such file or directory|"
    r"no command specified"
)
# the kubelet's runAsNonRoot check of the image's user (pkg/kubelet/kuberuntime/
# security_context_others.go verifyRunAsNonRoot): the one CreateContainerConfigError that is
# about the spec and the image, not a Secret or ConfigMap that may still appear
_ROOT_REFUSED = re.compile(
    r"runAsNonRoot and image (?:will run as root|has non-numeric user)|breaks non-root policy"
)
_START_REASONS = frozenset({"StartError", "ContainerCannotRun"})
_CREATE_REASONS = frozenset({"CreateContainerError", "RunContainerError"})
# FitError reasons no node can ever satisfy without a change to the pod or the nodes' labels and
# taints; resource shortage, ports, spreading, pod affinity and cordons can pass (an autoscaler,
# pods leaving, an uncordon)
_NEVER_FITS = (
    "didn't match Pod's node affinity/selector",
    "didn't match node selector",  # before Kubernetes 1.20
    "had untolerated taint",
    "had taints that the pod didn't tolerate",
    "node(s) didn't match the requested node name",
)
_FIT = re.compile(r"^0/\d+ nodes are available: (?P<reasons>.*?)\.(?: preemption: .*)?$", re.S)


@dataclass(frozen=True)
class Doom:
    """One pod (or the workload, for pods that cannot be created) that cannot become ready."""

    pod: str  # "" for the workload's own refusal (FailedCreate)
    node: str
    container: str  # "" for the whole pod (scheduling) or the workload
    reason: str  # the kubelet's, scheduler's or controller's reason, e.g. ErrImagePull
    message: str  # its text, one line
    why: str  # why waiting cannot heal it, and what to change
    ran: bool = False  # the container ran (crash loop): its log has something to say
    init: bool = False

    def line(self, *, workload: str) -> str:
        """`deployment web: pod web-7c9 (node-2) container app: ErrImagePull: ...; why`."""
        where = workload
        if self.pod:
            where += f": pod {self.pod} ({self.node})" if self.node else f": pod {self.pod}"
        if self.container:
            where += f" {'init container' if self.init else 'container'} {self.container}"
        said = f"{self.reason}: {self.message}" if self.message else self.reason
        return f"{where}: {said}; {self.why}"


def _clean(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 3] + "..."


def _when(event: Mapping[str, Any]) -> str:
    """When an event last happened: core/v1's lastTimestamp, or events.k8s.io's series/eventTime."""
    return (
        text(event, "lastTimestamp")
        or text(mapping(event, "series"), "lastObservedTime")
        or text(event, "eventTime")
        or text(mapping(event, "metadata"), "creationTimestamp")
    )


def _count(event: Mapping[str, Any]) -> int:
    return max(integer(event, "count"), integer(mapping(event, "series"), "count"), 1)


def events_of(events: Sequence[Mapping[str, Any]], *, pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The events about `pod` (by name, and by uid when the event carries one), oldest first."""
    meta = mapping(pod, "metadata")
    name, uid = text(meta, "name"), text(meta, "uid")
    own = []
    for ev in events:
        ref = mapping(ev, "involvedObject")
        if text(ref, "kind") == "Pod" and text(ref, "name") == name and text(ref, "uid") in ("", uid):
            own.append(ev)
    return sorted(own, key=_when)


def _pull_failures(events: Sequence[Mapping[str, Any]], field_path: str) -> list[Mapping[str, Any]]:
    return [
        ev
        for ev in events
        if text(mapping(ev, "involvedObject"), "fieldPath") == field_path
        and text(ev, "reason") == "Failed"
        and text(ev, "message").startswith("Failed to pull image")
    ]


def pull_failed_for_good(events: Sequence[Mapping[str, Any]], *, field_path: str) -> str | None:
    """The runtime's error when the last PULL_ATTEMPTS pulls of this container all failed as not
    found, manifest unknown or unauthorized; None while a pull may still succeed. `events` are
    the pod's, oldest first (an identical failure is one event whose `count` grows)."""
    failures = _pull_failures(events, field_path)
    if not failures:
        return None
    last = failures[-1]
    if not _PULL_FOR_GOOD.search(text(last, "message")):
        return None
    attempts = _count(last)
    for earlier in reversed(failures[:-1]):
        if attempts >= PULL_ATTEMPTS or not _PULL_FOR_GOOD.search(text(earlier, "message")):
            break
        attempts += _count(earlier)
    if attempts < PULL_ATTEMPTS:
        return None
    return text(last, "message").partition(": ")[2] or text(last, "message")


def _terminated(status: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(status, "state", "terminated") or mapping(status, "lastState", "terminated")


def _exit(term: Mapping[str, Any]) -> str:
    reason = text(term, "reason")
    return f"exit code {integer(term, 'exitCode')}" + (f" ({reason})" if reason else "")


def container_doom(
    status: Mapping[str, Any], *, events: Sequence[Mapping[str, Any]], field_path: str
) -> tuple[str, str, str, bool] | None:
    """(reason, message, why, ran) when this container can never start or keep running; None
    while it may. `status` is one of the pod's containerStatuses/initContainerStatuses."""
    waiting = mapping(status, "state", "waiting")
    reason, message = text(waiting, "reason"), _clean(text(waiting, "message"))
    term = _terminated(status)
    if reason == "InvalidImageName":
        return reason, message, "the image name cannot be parsed; fix the image reference", False
    if reason == "ErrImageNeverPull":
        return (
            reason,
            message,
            "imagePullPolicy Never and the node does not have the image; load it or change the policy",
            False,
        )
    if reason in ("ErrImagePull", "ImagePullBackOff"):
        error = pull_failed_for_good(events, field_path=field_path)
        if error is not None:
            why = (
                f"the registry refused the image on {PULL_ATTEMPTS} consecutive pulls (no such tag or "
                "repository, or no access to it); fix the image reference or its pull secret"
            )
            return "ErrImagePull", _clean(error), why, False
        return None
    if reason == "CreateContainerConfigError" and _ROOT_REFUSED.search(message):
        why = "the image runs as root and the pod says runAsNonRoot; set runAsUser or use a non-root image"
        return reason, message, why, False
    why_program = "the image has no such program; fix the command or the image"
    if reason in _CREATE_REASONS and _NO_PROGRAM.search(message):
        return reason, message, why_program, False
    if text(term, "reason") in _START_REASONS and _NO_PROGRAM.search(text(term, "message")):
        return text(term, "reason"), _clean(text(term, "message")), why_program, False
    restarts = integer(status, "restartCount")
    if reason == "CrashLoopBackOff" and restarts >= CRASH_LOOP_RESTARTS:
        last = f"last run: {_exit(term)}" if term else ""
        said = f"{restarts} restarts" + (f", {last}" if last else "")
        why = "the container keeps exiting; a restart recreates the same crash, fix what its log says"
        return reason, said, why, True
    return None


def never_schedulable(message: str) -> bool:
    """The scheduler's FitError names only reasons no node can ever satisfy as the cluster is:
    node selector/affinity and taints (not resource shortage, which an autoscaler may heal)."""
    found = _FIT.match(" ".join(message.split()))
    if found is None:
        return False
    reasons = [r.strip() for r in found["reasons"].split(", ") if r.strip()]
    counted = [re.match(r"^\d+ (.+)$", r) for r in reasons]
    return bool(counted) and all(
        m is not None and any(never in m[1] for never in _NEVER_FITS) for m in counted
    )


def pod_dooms(pod: Mapping[str, Any], *, events: Sequence[Mapping[str, Any]] = ()) -> list[Doom]:
    """Why this pod can never become ready, one Doom per cause (empty while it may). `events` are
    the pod's, oldest first (`events_of`); without them a failing pull is never judged final."""
    meta, spec, status = mapping(pod, "metadata"), mapping(pod, "spec"), mapping(pod, "status")
    if meta.get("deletionTimestamp") or text(status, "phase") in ("Succeeded", "Failed"):
        return []
    name, node = text(meta, "name"), text(spec, "nodeName")
    if not node:
        for cond in maps(status, "conditions"):
            if (
                text(cond, "type") == "PodScheduled"
                and text(cond, "status") == "False"
                and never_schedulable(text(cond, "message"))
            ):
                why = (
                    "no node matches the pod's node selector, affinity or tolerations; change them "
                    "or the nodes"
                )
                return [Doom(name, "", "", "FailedScheduling", _clean(text(cond, "message")), why)]
        return []
    found: list[Doom] = []
    for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        for cs in maps(status, key):
            container = text(cs, "name")
            path = f"spec.{'initContainers' if init else 'containers'}{{{container}}}"
            doom = container_doom(cs, events=events, field_path=path)
            if doom is not None:
                reason, message, why, ran = doom
                found.append(Doom(name, node, container, reason, message, why, ran=ran, init=init))
    return found


_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_SUFFIX: dict[str, Decimal | int] = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3, "M": 10**6,
    "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
    "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


def quantity(value: str) -> Decimal | None:
    """A resource.Quantity's value (`500m`, `2Gi`, `1e3`), None when it is not one."""
    found = _QUANTITY.match(value.strip())
    if found is None:
        return None
    try:
        return Decimal(found[1]) * _SUFFIX[found[2] or ""]
    except InvalidOperation:
        return None


def _resource_list(part: str) -> dict[str, Decimal]:
    """`requests.cpu=2,requests.memory=1Gi` (the quota admission's prettyPrint)."""
    out: dict[str, Decimal] = {}
    for item in part.split(","):
        key, sep, value = item.partition("=")
        amount = quantity(value) if sep else None
        if amount is not None:
            out[key.strip()] = amount
    return out


_QUOTA = re.compile(
    r"exceeded quota: (?P<quota>[^,]+), requested: (?P<requested>\S*), used: (?P<used>\S*), "
    r"limited: (?P<limited>[^\s;]*)",
    re.I,
)


def quota_never_fits(message: str) -> str | None:
    """The quota whose hard limit is below what ONE pod requests: no pod can ever be created.
    A quota that is merely full is not final: a rolling update frees it as old pods go."""
    found = _QUOTA.search(message)
    if found is None:
        return None
    requested, limited = _resource_list(found["requested"]), _resource_list(found["limited"])
    if any(amount > limited[key] for key, amount in requested.items() if key in limited):
        return found["quota"].strip()
    return None


def creation_doom(message: str) -> str | None:
    """Why a refusal to create the pods (FailedCreate) is final, or None when it may pass (a
    ServiceAccount created later, a quota that frees up, a webhook that was down)."""
    quota = quota_never_fits(message)
    if quota is not None:
        return (
            f"one pod asks for more than resource quota {quota} allows; lower the requests or raise the quota"
        )
    if "violates PodSecurity" in message:
        return "the namespace's Pod Security level refuses the pod template; change the template or the level"
    if re.search(r"admission webhook \"[^\"]*\" denied the request|denied request:", message):
        return "an admission policy refuses the pod template; change the template"
    return None


def refused_creation(*, workload: Mapping[str, Any], events: Sequence[Mapping[str, Any]] = ()) -> Doom | None:
    """The controller's FailedCreate for a final cause: the Deployment's ReplicaFailure condition
    (copied from its ReplicaSet), or the latest FailedCreate event about the workload (StatefulSet,
    DaemonSet)."""
    messages: list[str] = []
    for cond in maps(mapping(workload, "status"), "conditions"):
        if text(cond, "type") == "ReplicaFailure" and text(cond, "status") == "True":
            messages.append(text(cond, "message"))
    meta = mapping(workload, "metadata")
    about = [
        ev
        for ev in events
        if text(ev, "reason") == "FailedCreate"
        and text(mapping(ev, "involvedObject"), "name") == text(meta, "name")
        and text(mapping(ev, "involvedObject"), "uid") in ("", text(meta, "uid"))
    ]
    if about:
        messages.append(text(max(about, key=_when), "message"))
    for message in messages:
        why = creation_doom(message)
        if why is not None:
            return Doom("", "", "", "FailedCreate", _clean(message), why)
    return None


def warning_lines(events: Sequence[Mapping[str, Any]], *, limit: int = 10) -> list[str]:
    """A pod's last warning events, as krane shows them: `Warning BackOff (x5): message`."""
    warnings = [ev for ev in events if text(ev, "type") == "Warning"]
    lines = []
    for ev in warnings[-limit:]:
        count = _count(ev)
        times = f" (x{count})" if count > 1 else ""
        lines.append(f"{text(ev, 'reason')}{times}: {_clean(text(ev, 'message'))}")
    return lines
