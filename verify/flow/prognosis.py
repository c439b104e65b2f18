"""While a rollout is waited for (--fail-fast, the default): whether it can still complete. Every
few seconds the pods of the new revision are read; as soon as one is in a state no waiting heals
(diagnose/doom.py judges), its evidence is said (the container's last log lines, the pod's
warning events, as krane shows a doomed pod) and the wait ends with exit 4, minutes before
--timeout would."""

from __future__ import annotations

from typing import Any

from verify import errors
from verify.diagnose.doom import Doom, pod_dooms, refused_creation
from verify.flow.evidence import SHOWN_PODS, event_lines, log_lines
from verify.flow.state import WorkloadState
from verify.kube import objects
from verify.kube.kinds import TITLE
from verify.kube.objects import integer, mapping, maps, text

CHECK_EVERY = 5.0  # seconds between two looks at a waiting rollout's pods
_PULLING = frozenset({"ErrImagePull", "ImagePullBackOff"})
MAX_EVENT_READS = 5  # pods whose events one look reads (a 100-replica Deployment pulls one image)


def _observed(kind: str, workload: dict[str, Any]) -> bool:
    """The controller has seen the current spec: its revision's pods are the new ones."""
    status = mapping(workload, "status")
    observed = integer(status, "observedGeneration")
    return observed > 0 and objects.generation(workload) <= observed


def _pulling(pod: dict[str, Any]) -> bool:
    status = mapping(pod, "status")
    return any(
        text(mapping(cs, "state", "waiting"), "reason") in _PULLING
        for key in ("initContainerStatuses", "containerStatuses")
        for cs in maps(status, key)
    )


class Prognosis:
    """Looks at one waiting workload's new pods; raises RolloutDoomed when one cannot heal."""

    def __init__(self, state: WorkloadState) -> None:
        self.state = state

    def __call__(self, workload: dict[str, Any]) -> None:
        state, kind = self.state, self.state.plan.ref.kind
        if not _observed(kind, workload):
            return
        lookup = state.lookup
        try:
            selection = lookup.selection(kind=kind, workload=workload, containers=())
        except errors.VerifyError:
            return  # a look is a courtesy: the wait itself says what cannot be read
        pods = [lookup.listed[p.name] for p in selection.pods if p.name in lookup.listed]
        events: dict[str, list[dict[str, Any]] | None] = {}
        for pod in [p for p in pods if _pulling(p)][:MAX_EVENT_READS]:
            events[objects.name(pod)] = lookup.events("Pod", objects.name(pod))
        dooms = [d for pod in pods for d in pod_dooms(pod, events=events.get(objects.name(pod)) or [])]
        if not dooms:
            # a pod the API refuses: the Deployment's ReplicaFailure condition, else (StatefulSet,
            # DaemonSet) the controller's FailedCreate events, read only while pods are missing
            about: list[dict[str, Any]] = []
            if kind != "deployment" and len(pods) < self._wanted(kind, workload):
                about = lookup.events(TITLE[kind], objects.name(workload)) or []
            refused = refused_creation(workload=workload, events=about)
            dooms = [refused] if refused else []
        if not dooms:
            return
        self._doomed(workload, dooms, pods={objects.name(p): p for p in pods}, events=events)

    @staticmethod
    def _wanted(kind: str, workload: dict[str, Any]) -> int:
        if kind == "daemonset":
            return integer(mapping(workload, "status"), "desiredNumberScheduled")
        return objects.replicas(workload)

    def _doomed(
        self,
        workload: dict[str, Any],
        dooms: list[Doom],
        *,
        pods: dict[str, dict[str, Any]],
        events: dict[str, list[dict[str, Any]] | None],
    ) -> None:
        """Say each doomed pod's evidence, then end the wait."""
        state, lookup = self.state, self.state.lookup
        label = state.label
        lines = [d.line(workload=label) for d in dooms[:SHOWN_PODS]]
        shown: set[str] = set()
        for d in dooms[:SHOWN_PODS]:
            # the doom itself is the verdict line's words (said once); here what the pod says
            if not d.pod or d.pod in shown:
                continue
            shown.add(d.pod)
            pod = pods.get(d.pod, {})
            if d.container and d.ran:
                where = f"{label}: pod {d.pod} container {d.container}"
                lines_of = log_lines(
                    lookup, where=where, pod=d.pod, container=d.container, previous=False, restarted=True
                )
                for line in lines_of:
                    state.log(line)
            if d.pod not in events:
                events[d.pod] = lookup.events("Pod", d.pod)
            for line in event_lines(where=f"{label}: pod {d.pod}", pod=pod, events=events[d.pod]):
                state.log(line)
        for note in lookup.take_notes():
            state.log(f"{label}: {note}")
        more = len(dooms) - SHOWN_PODS
        message = "; ".join(line.removeprefix(f"{label}: ") for line in lines)
        if more > 0:
            message += f"; and {more} more"
        raise errors.RolloutDoomed(
            f"cannot complete without a change to the spec (--fail-fast): {message}", workload
        )
