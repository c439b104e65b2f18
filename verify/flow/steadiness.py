"""Verified means stable, for one attempt: the selected containers' states when their pods were
selected, the settle window waited out before their inspection, whether each held still until its
end (flow/stability.py judges), and what a container that did not says for itself."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from verify.findings import ContainerObservation, PodObservation, PodTarget, Uninspectable
from verify.flow import stability
from verify.flow.evidence import SHOWN_PODS, event_lines, log_lines
from verify.flow.selection import PodSelection
from verify.flow.state import WorkloadState
from verify.kube import objects

Unsteady = dict[tuple[str, str], str]  # (pod, container) -> why it did not hold still


class Steadiness:
    """Verified means stable: the selected containers' states at selection, the settle window
    before their inspection, and whether each held still until the inspection's end."""

    def __init__(self, state: WorkloadState, workload: dict[str, Any], selection: PodSelection) -> None:
        self.state, self.workload, self.selection = state, workload, selection
        listed = state.lookup.listed
        self.before = {
            p.name: stability.pod_state(listed.get(p.name, {}), containers=p.containers)
            for p in selection.pods
        }
        self.after: dict[str, stability.PodState] = {}
        now = time.time()
        self.unsteady: Unsteady = {
            (pod, c): why
            for pod, st in self.before.items()
            for c, why in stability.unsteady_now(st, now=now).items()
        }

    def settle(self) -> None:
        """Wait until every ready container has been ready for the settle window."""
        context = self.state.context
        window = stability.settle_window(setting=context.settings.min_ready, workload=self.workload)
        wait = stability.settle_seconds(pods=list(self.before.values()), window=window, now=time.time())
        wait = min(wait, context.api.deadline.remaining())
        if wait > 0:
            self.state.log(
                f"{self.state.label}: waiting {wait:.1f}s until its pods have been ready for {window:g}s "
                "(--min-ready)"
            )
            time.sleep(wait)

    def check(self) -> None:
        """Read the pods again: each container must be the same one, still running and ready."""
        pods = self.state.lookup.pods(selector=objects.selector(self.workload))
        now = {objects.name(p): p for p in pods}
        for target in self.selection.pods:
            pod = now.get(target.name)
            if pod is None or (target.uid and objects.uid(pod) != target.uid) or objects.deleting(pod):
                # deleted (a new deploy, a drain, a scale-down), not crashed: what its exec saw stands,
                # and a pod deleted while it was inspected is told apart by its exec (pod_gone)
                continue
            after = stability.pod_state(pod, containers=target.containers)
            self.after[target.name] = after
            for c, why in stability.changed(before=self.before[target.name], after=after).items():
                self.unsteady.setdefault((target.name, c), why)

    def skip(self, pc: tuple[str, str]) -> bool:
        return pc in self.unsteady

    def mark(self, observations: list[PodObservation]) -> list[PodObservation]:
        """Every selected pod's observation, with each container that did not hold still as a
        failure a restart cannot fix."""
        seen = {o.pod.name: o for o in observations}
        out = []
        for target in self.selection.pods:
            o = seen.get(target.name) or PodObservation(pod=target)
            by_name = {c.container: c for c in o.containers}
            containers: list[ContainerObservation] = []
            for name in target.containers:
                why = self.unsteady.get((target.name, name))
                if why is not None:
                    err = Uninspectable("unstable", f"not stable: {why}", permanent=True)
                    containers.append(ContainerObservation(container=name, error=err))
                elif name in by_name:
                    containers.append(by_name[name])
            out.append(dataclasses.replace(o, containers=tuple(containers)))
        return out

    def evidence(self) -> list[str]:
        """Each unsteady container's failure in words, its last log lines and its pod's warnings."""
        state, lookup = self.state, self.state.lookup
        lines: list[str] = []
        pods_said: set[str] = set()
        shown = sorted({pod for pod, _ in self.unsteady})[:SHOWN_PODS]
        for pod, container in sorted(self.unsteady):
            if pod not in shown:
                continue
            where = f"{state.label}: pod {pod} container {container}"
            lines.append(
                f"{where} is not stable, so it is not verified; a restart would recreate the same "
                "failure (nothing was restarted): fix what its log and events say"
            )
            now = self.after.get(pod, self.before.get(pod))
            c = now.container(container) if now is not None else None
            # a container running again after a restart: the run that failed is the previous one
            restarted = c is not None and c.restarts > 0
            lines += log_lines(
                lookup,
                where=where,
                pod=pod,
                container=container,
                previous=restarted and c is not None and c.running,
                restarted=restarted,
            )
            if pod not in pods_said:
                pods_said.add(pod)
                listed = lookup.listed.get(pod, {})
                lines += event_lines(
                    where=f"{state.label}: pod {pod}", pod=listed, events=lookup.events("Pod", pod)
                )
        more = len({pod for pod, _ in self.unsteady}) - len(shown)
        if more > 0:
            lines.append(f"{state.label}: {more} more pod{'s' if more != 1 else ''} not stable (not shown)")
        return lines


def all_pods(observations: list[PodObservation], pods: tuple[PodTarget, ...]) -> list[PodObservation]:
    """The observations, with an empty one for each pod none of whose containers was exec'd."""
    seen = {o.pod.name for o in observations}
    return observations + [PodObservation(pod=p) for p in pods if p.name not in seen]
