"""What one attempt reads from the cluster: the workload's revision owners and pods (one list per
kind, never one request per pod) and the ConfigMaps/Secrets its expectations name, each read once
so every check of the attempt judges against the same version."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verify import errors
from verify.diagnose.rollout import creating_silently, not_ready
from verify.flow.csi import GROUP_VERSION
from verify.flow.derive import Ref
from verify.flow.restart import Revision, revision_of
from verify.flow.selection import (
    PodSelection,
    select_current_pods,
    select_daemonset_pods,
    select_rollout_pods,
    select_statefulset_pods,
)
from verify.kube import objects
from verify.kube.api import Api
from verify.model import Kind

LOG_BYTES = 16384  # the most of a container's log read for its last lines
LOG_LINE = 300  # characters of one log line shown


class Lookup:
    """Reads of one workload's namespace, with the ConfigMaps/Secrets of the current attempt kept."""

    def __init__(self, *, api: Api, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        # ConfigMaps/Secrets read in this attempt (None: not found), each once
        self.sources: dict[Ref, dict[str, Any] | None] = {}
        # SecretProviderClasses read in this attempt (None: not found), and those RBAC withholds
        self.classes: dict[str, dict[str, Any] | None] = {}
        self.classes_denied: set[str] = set()
        self._notes: list[str] = []
        self._said: set[str] = set()
        # the pods the last selection was made from, by name (their states at selection)
        self.listed: dict[str, dict[str, Any]] = {}

    def new_attempt(self) -> None:
        """Forget the sources read so far: the next attempt judges against their new versions."""
        self.sources.clear()
        self.classes.clear()
        self.classes_denied.clear()

    def note(self, line: str) -> None:
        """Something the run could not read and works around: said once per run."""
        if line not in self._said:
            self._said.add(line)
            self._notes.append(line)

    def take_notes(self) -> list[str]:
        out, self._notes = self._notes, []
        return out

    def provider_class(self, name: str) -> dict[str, Any] | None:
        """A SecretProviderClass, read once per attempt; None when it does not exist or RBAC
        withholds it (then named in `classes_denied`, and said once)."""
        if name in self.classes or name in self.classes_denied:
            return self.classes.get(name)
        obj: dict[str, Any] | None
        try:
            obj = self.api.get(
                f"/apis/{GROUP_VERSION}/namespaces/{self.namespace}/secretproviderclasses/{name}"
            )
        except errors.NotFound:
            obj = None  # no such class, or no such kind (the driver's CRDs are not installed)
        except errors.Forbidden:
            self.classes_denied.add(name)
            self.note(
                f"cannot read secretproviderclass {name} (no permission: `get "
                "secretproviderclasses.secrets-store.csi.x-k8s.io`): the files of its CSI volumes "
                "are not checked; env from the Secrets it syncs still is"
            )
            return None
        self.classes[name] = obj
        return obj

    def class_pod_statuses(self) -> list[dict[str, Any]] | None:
        """The namespace's SecretProviderClassPodStatus objects (which pod mounted which class
        and object versions); None when they cannot be read (said once)."""
        try:
            items = self.api.list(
                f"/apis/{GROUP_VERSION}/namespaces/{self.namespace}/secretproviderclasspodstatuses"
            )
        except errors.NotFound:
            return []
        except errors.Forbidden:
            self.note(
                "cannot list secretproviderclasspodstatuses (no permission: `list "
                "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io`): the diagnosis cannot "
                "say which object versions each pod mounted"
            )
            return None
        return items

    def source(self, kind: str, name: str) -> dict[str, Any] | None:
        """A ConfigMap/Secret, read once per attempt however many expectations name it."""
        if (kind, name) in self.sources:
            return self.sources[(kind, name)]
        plural = "configmaps" if kind == "configmap" else "secrets"
        obj: dict[str, Any] | None
        try:
            obj = self.api.get(f"/api/v1/namespaces/{self.namespace}/{plural}/{name}")
        except errors.NotFound:
            obj = None
        self.sources[(kind, name)] = obj
        return obj

    def read_sources(self) -> dict[tuple[str, str], dict[str, Any] | None]:
        """Every ConfigMap, Secret and SecretProviderClass this attempt read, as read (None: not
        found): what the restart record's content digest covers."""
        out: dict[tuple[str, str], dict[str, Any] | None] = dict(self.sources)
        out.update((("secretproviderclass", name), obj) for name, obj in self.classes.items())
        return out

    def revision(self, *, kind: Kind, workload: dict[str, Any], selection: PodSelection) -> Revision:
        """The inspected pods' revision: its name and its number in the workload's history (a
        StatefulSet's number is its update ControllerRevision's, read here)."""
        if kind in ("deployment", "rollout"):  # a Rollout's restart keeps its revision
            name, number = selection.template_hash, selection.revision
        elif kind == "daemonset":
            name, number = selection.replicaset, selection.revision
        else:
            name, number = selection.revision, ""
            revisions = self.api.list(
                f"/apis/apps/v1/namespaces/{self.namespace}/controllerrevisions",
                labelSelector=objects.selector(workload),
            )
            found = [
                r for r in revisions if objects.name(r) == name and objects.owned_by(r, objects.uid(workload))
            ]
            number = str(objects.integer(found[0], "revision")) if found else ""
        return revision_of(workload=workload, name=name, number=int(number) if number.isdigit() else 0)

    def pods_of(self, workload: dict[str, Any]) -> list[dict[str, Any]]:
        """The pods the workload's selector selects: none without one of its own (a workloadRef
        Rollout borrows its Deployment's), never the whole namespace's."""
        selector = objects.selector(workload)
        return self.pods(selector=selector) if selector else []

    def pods(self, *, selector: str) -> list[dict[str, Any]]:
        return self.api.list(f"/api/v1/namespaces/{self.namespace}/pods", labelSelector=selector)

    def _last_events(self, reason: str) -> dict[tuple[str, str], str]:
        """(pod, container or "") -> the message of the last event of `reason` on it; {} when
        events cannot be read (what they say is a courtesy: never the reason a run fails)."""
        try:
            found = self.api.list(
                f"/api/v1/namespaces/{self.namespace}/events",
                fieldSelector=f"involvedObject.kind=Pod,reason={reason}",
            )
        except errors.VerifyError:
            return {}
        latest: dict[tuple[str, str], tuple[str, str]] = {}
        for ev in found:
            involved = objects.mapping(ev, "involvedObject")
            path = objects.text(involved, "fieldPath")  # `spec.containers{NAME}` for a container's
            key = (objects.text(involved, "name"), path.removeprefix("spec.containers{").removesuffix("}"))
            when = objects.text(ev, "lastTimestamp") or objects.text(ev, "eventTime")
            if key not in latest or when >= latest[key][0]:
                latest[key] = (when, objects.text(ev, "message"))
        return {key: message for key, (_, message) in latest.items()}

    def mount_failures(self, pods: Sequence[dict[str, Any]]) -> dict[str, str]:
        """Pod name -> the last FailedMount event's message, for pods waiting in ContainerCreating
        without a word (the kubelet says why only in events); {} when events cannot be read."""
        if not any(creating_silently(p) for p in pods):
            return {}
        return {pod: message for (pod, _), message in self._last_events("FailedMount").items()}

    def probe_failures(self, pods: Sequence[dict[str, Any]]) -> dict[str, dict[str, str]]:
        """Pod name -> container -> the last probe failure the kubelet recorded (an Unhealthy event
        on the container, `Readiness probe failed: …`: pkg/kubelet/prober/prober.go), for pods
        with a container running but not ready; {} when there is none or events cannot be read."""
        wanted = {objects.name(p): set(not_ready(p)) for p in pods}
        if not any(wanted.values()):
            return {}
        out: dict[str, dict[str, str]] = {}
        for (pod, container), message in self._last_events("Unhealthy").items():
            if container in wanted.get(pod, ()):
                out.setdefault(pod, {})[container] = message
        return out

    def selection(
        self, *, kind: Kind, workload: dict[str, Any], containers: Sequence[str], revision: str = "latest"
    ) -> PodSelection:
        """The pods of the workload's current revision. The revision's owners are listed first
        (ReplicaSets or ControllerRevisions), then its pods: a pod created in between belongs to a
        revision already listed. The pods listed are kept in `listed`."""
        ns, sel = self.namespace, objects.selector(workload)
        if kind == "statefulset":
            return select_statefulset_pods(
                statefulset=workload, pods=self._listed(sel), containers=containers
            )
        if kind == "daemonset":
            revisions = self.api.list(f"/apis/apps/v1/namespaces/{ns}/controllerrevisions", labelSelector=sel)
            return select_daemonset_pods(
                daemonset=workload, revisions=revisions, pods=self._listed(sel), containers=containers
            )
        rss = self.api.list(f"/apis/apps/v1/namespaces/{ns}/replicasets", labelSelector=sel)
        if kind == "rollout":
            return select_rollout_pods(
                rollout=workload,
                replicasets=rss,
                pods=self._listed(sel),
                containers=containers,
                revision=revision,
            )
        return select_current_pods(
            deployment=workload, replicasets=rss, pods=self._listed(sel), containers=containers
        )

    def _listed(self, selector: str) -> list[dict[str, Any]]:
        pods = self.pods(selector=selector)
        self.listed = {objects.name(p): p for p in pods}
        return pods

    def events(self, kind: str, name: str) -> list[dict[str, Any]] | None:
        """The events about one object: a Pod's (the kubelet's pull failures, back-offs, probe
        failures), a StatefulSet's or DaemonSet's (FailedCreate); None when they cannot be read
        (no `list events`: said once)."""
        try:
            found: list[dict[str, Any]] = self.api.list(
                f"/api/v1/namespaces/{self.namespace}/events",
                fieldSelector=f"involvedObject.kind={kind},involvedObject.name={name}",
            )
        except errors.Forbidden:
            self.note(
                "cannot list events (no permission: `list events`): a pull that keeps failing is "
                "not judged final, and failing pods are shown without their events"
            )
            return None
        except errors.VerifyError:
            return None  # a courtesy: never the reason a run fails
        return found

    def log_tail(self, pod: str, container: str, *, previous: bool, lines: int = 10) -> list[str] | None:
        """A container's last `lines` log lines (its previous run's with `previous`), each cut at
        LOG_LINE characters; None when the log cannot be read (no `get pods/log`: said once)."""
        try:
            body = self.api.text(
                f"/api/v1/namespaces/{self.namespace}/pods/{pod}/log",
                limit=LOG_BYTES,
                container=container,
                tailLines=str(lines),
                limitBytes=str(LOG_BYTES),
                **({"previous": "true"} if previous else {}),
            )
        except errors.Forbidden:
            self.note(
                "cannot read container logs (no permission: `get pods/log`): failing containers "
                "are shown without their last log lines"
            )
            return None
        except errors.VerifyError:
            return None  # gone, never started, rotated away: a courtesy, never the verdict
        return [line[:LOG_LINE] for line in body.splitlines()[-lines:]]
