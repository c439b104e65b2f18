"""The pod status a kubelet writes from its containers' state (pkg/kubelet/kubelet_pods.go
generateAPIPodStatus, getPhase; status/generate.go for the conditions)."""

from __future__ import annotations

import hashlib

from ..storage.store import Obj, now_rfc3339
from .containers import ContainerRuntime, PodRuntime
from .images import repository

# kubetypes.PodConditionsByKubelet (plus DisruptionTarget): the rest are kept as others wrote them
KUBELET_CONDITIONS = (
    "PodScheduled",
    "Ready",
    "Initialized",
    "ContainersReady",
    "PodReadyToStartContainers",
    "DisruptionTarget",
)


def image_id(image: str) -> str:
    """The resolved image digest the runtime reports (made up, stable per image name)."""
    repo = repository(image)
    full = (
        repo if "." in repo.split("/", 1)[0] else ("docker.io/" + ("" if "/" in repo else "library/") + repo)
    )
    return f"{full}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def container_statuses(rt: PodRuntime, field: str = "containers") -> list[Obj]:
    """status.containerStatuses (or, with `field="initContainers"`, initContainerStatuses; with
    "ephemeralContainers", ephemeralContainerStatuses)."""
    statuses = []
    waiting = "PodInitializing" if rt.pod["spec"].get("initContainers") else "ContainerCreating"
    for c in rt.pod["spec"].get(field) or []:
        crt = rt.containers.get(c["name"]) or ContainerRuntime(c["name"], c.get("image", ""), reason=waiting)
        if crt.state == "running":
            state: Obj = {"running": {"startedAt": crt.started_at}}
        elif crt.state == "terminated":
            state = {"terminated": dict(crt.last_exit or {})}
        else:
            state = {
                "waiting": {
                    "reason": crt.reason,
                    **({"message": crt.message} if crt.message else {}),
                }
            }
        # the state just ended is `state.terminated` until the kubelet acts on it; afterwards (a
        # waiting or running successor) it is `lastState.terminated`
        last = crt.last_exit if crt.state != "terminated" else crt.prev_exit
        # an ephemeral container is never ready (it has no probes and serves nothing)
        ready = crt.state == "running" and crt.ready and field != "ephemeralContainers"
        if field == "initContainers" and c.get("restartPolicy") != "Always":
            # a completed init container is ready (kubelet_pods.go convertToAPIContainerStatuses)
            ready = crt.state == "terminated" and (crt.last_exit or {}).get("exitCode") == 0
        st: Obj = {
            "name": c["name"],
            "image": crt.image,
            "imageID": image_id(crt.image) if crt.container_id else "",
            "ready": ready,
            "started": crt.state == "running" and crt.started,
            "restartCount": crt.restarts,
            "state": state,
            "lastState": {"terminated": dict(last)} if last else {},
        }
        if crt.container_id:  # a container waiting to be restarted keeps its last one's ID
            st["containerID"] = crt.container_id
        statuses.append(st)
    return statuses


def phase(pod: Obj, statuses: list[Obj], rt: PodRuntime | None = None) -> str:
    """getPhase: until its init containers are done the pod is Pending (Failed if one failed
    under restartPolicy Never); a container waiting for its first start keeps the pod Pending;
    one waiting to be restarted (it has a last state) counts as stopped, and stopped containers
    under restartPolicy Always (or OnFailure with a failure) are Running."""
    if rt is not None and pod["spec"].get("initContainers") and not rt.initialized:
        return "Failed" if rt.init_failed else "Pending"
    policy = pod["spec"].get("restartPolicy", "Always")
    running = waiting = stopped = succeeded = 0
    for st in statuses:
        state = st["state"]
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += state["terminated"].get("exitCode") == 0
        elif st["lastState"].get("terminated"):
            stopped += 1
        else:
            waiting += 1
    if waiting or not statuses:
        return "Pending"
    if running:
        return "Running"
    if policy == "Always":
        return "Running"
    if stopped == succeeded:
        return "Succeeded"
    return "Failed" if policy == "Never" else "Running"


def apply_status(p: Obj, rt: PodRuntime, host_ip: str) -> None:
    """Write the runtime's view into pod `p` (mutated in place)."""
    statuses = container_statuses(rt)
    inits = p["spec"].get("initContainers") or []
    init_statuses = container_statuses(rt, "initContainers")
    # status/generate.go GenerateContainersReadyCondition: the regular containers and the
    # restartable init containers (sidecars) must all be ready
    sidecars = {c["name"] for c in inits if c.get("restartPolicy") == "Always"}
    counted = [s for s in init_statuses if s["name"] in sidecars] + statuses
    all_ready = bool(statuses) and all(s["ready"] for s in counted)
    initialized = not inits or rt.initialized
    now = now_rfc3339()
    status = p.setdefault("status", {})
    old = {c["type"]: c for c in status.get("conditions") or []}
    ph = phase(p, statuses, rt)
    done = ph in ("Succeeded", "Failed")

    def cond(t: str, ok: bool) -> Obj:
        s = "True" if ok else "False"
        prev = old.get(t)
        ltt = prev["lastTransitionTime"] if prev and prev.get("status") == s else now
        c: Obj = {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": ltt}
        if not ok and t in ("Ready", "ContainersReady"):
            if done:
                c["reason"] = "PodCompleted"
            else:
                c["reason"] = "ContainersNotReady"
                notready = [x["name"] for x in counted if not x["ready"]]
                c["message"] = f"containers with unready status: [{' '.join(notready)}]"
        if not ok and t == "Initialized":
            # GeneratePodInitializedCondition
            if done:
                c["reason"] = "PodCompleted"
            else:
                c["reason"] = "ContainersNotInitialized"
                pending = [
                    x["name"]
                    for x in init_statuses
                    if not (x["started"] if x["name"] in sidecars else x["ready"])
                ]
                c["message"] = f"containers with incomplete status: [{' '.join(pending)}]"
        return c

    # GeneratePodReadyCondition: Ready also needs every readinessGates condition True (set by
    # others through the status; the kubelet keeps conditions it does not own)
    gates = [g.get("conditionType", "") for g in p["spec"].get("readinessGates") or []]
    unready = [
        f'corresponding condition of pod readiness gate "{g}" does not exist.'
        if g not in old
        else f'the status of pod readiness gate "{g}" is not "True", but {old[g].get("status")}'
        for g in gates
        if g not in old or old[g].get("status") != "True"
    ]
    ready = cond("Ready", all_ready and not unready)
    if all_ready and unready:
        ready.update(reason="ReadinessGatesNotReady", message=", ".join(unready))
    status["conditions"] = [c for t, c in old.items() if t not in KUBELET_CONDITIONS] + [
        cond("PodReadyToStartContainers", True),
        cond("Initialized", initialized),
        ready,
        cond("ContainersReady", all_ready),
        cond("PodScheduled", True),
    ]
    status["phase"] = ph
    status["hostIP"] = host_ip
    status["hostIPs"] = [{"ip": host_ip}]
    if rt.ip:
        status["podIP"] = rt.ip
        status["podIPs"] = [{"ip": rt.ip}]
    status.setdefault("startTime", now)
    status["containerStatuses"] = statuses
    if inits:
        status["initContainerStatuses"] = init_statuses
    if p["spec"].get("ephemeralContainers"):
        status["ephemeralContainerStatuses"] = container_statuses(rt, "ephemeralContainers")
    status["qosClass"] = qos_class(p["spec"])


def qos_class(spec: Obj) -> str:
    """v1qos.GetPodQOS: Guaranteed when every container limits cpu and memory and requests
    what it limits (a request defaults to its limit), BestEffort when none asks for either,
    else Burstable."""
    requested = limited = False
    guaranteed = True
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        res = c.get("resources") or {}
        limits, requests = (
            res.get("limits") or {},
            {**(res.get("limits") or {}), **(res.get("requests") or {})},
        )
        for r in ("cpu", "memory"):
            requested = requested or r in requests
            limited = limited or r in limits
            if r not in limits or str(requests.get(r)) != str(limits[r]):
                guaranteed = False
    if not requested and not limited:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"
