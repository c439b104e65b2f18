"""The pod status a kubelet writes from its containers' state (pkg/kubelet/kubelet_pods.go
generateAPIPodStatus, getPhase; status/generate.go for the conditions)."""

from __future__ import annotations

import hashlib

from ..storage.store import Obj, now_rfc3339
from .containers import ContainerRuntime, PodRuntime
from .images import repository


def image_id(image: str) -> str:
    """The resolved image digest the runtime reports (made up, stable per image name)."""
    repo = repository(image)
    full = (
        repo if "." in repo.split("/", 1)[0] else ("docker.io/" + ("" if "/" in repo else "library/") + repo)
    )
    return f"{full}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def container_statuses(rt: PodRuntime) -> list[Obj]:
    statuses = []
    for c in rt.pod["spec"].get("containers") or []:
        crt = rt.containers.get(c["name"]) or ContainerRuntime(c["name"], c.get("image", ""))
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
        st: Obj = {
            "name": c["name"],
            "image": crt.image,
            "imageID": image_id(crt.image) if crt.container_id else "",
            "ready": crt.state == "running" and crt.ready,
            "started": crt.state == "running" and crt.started,
            "restartCount": crt.restarts,
            "state": state,
            "lastState": {"terminated": dict(last)} if last else {},
        }
        if crt.container_id:  # a container waiting to be restarted keeps its last one's ID
            st["containerID"] = crt.container_id
        statuses.append(st)
    return statuses


def phase(pod: Obj, statuses: list[Obj]) -> str:
    """getPhase: a container waiting for its first start keeps the pod Pending; one waiting to be
    restarted (it has a last state) counts as stopped, and stopped containers under
    restartPolicy Always (or OnFailure with a failure) are Running."""
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
    all_ready = bool(statuses) and all(s["ready"] for s in statuses)
    now = now_rfc3339()
    status = p.setdefault("status", {})
    old = {c["type"]: c for c in status.get("conditions") or []}
    ph = phase(p, statuses)
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
                notready = [x["name"] for x in statuses if not x["ready"]]
                c["message"] = f"containers with unready status: [{' '.join(notready)}]"
        return c

    status["conditions"] = [
        cond("PodReadyToStartContainers", True),
        cond("Initialized", True),
        cond("Ready", all_ready),
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
    status.setdefault("qosClass", "BestEffort")
