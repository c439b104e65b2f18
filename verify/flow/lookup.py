"""What one attempt reads from the cluster: the workload's revision owners and pods (one list per
kind, never one request per pod) and the ConfigMaps/Secrets its expectations name, each read once
so every check of the attempt judges against the same version."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verify import errors
from verify.diagnose.rollout import creating_silently
from verify.flow.csi import GROUP_VERSION
from verify.flow.derive import Ref
from verify.flow.restart import Revision, revision_of
from verify.flow.selection import (
    PodSelection,
    select_current_pods,
    select_daemonset_pods,
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
        if kind == "deployment":
            name, number = selection.template_hash, selection.revision
        elif kind == "daemonset":
            name, number = selection.replicaset, selection.revision
        else:
            name, number = selection.revision, ""
            revisions = self.api.get(
                f"/apis/apps/v1/namespaces/{self.namespace}/controllerrevisions",
                labelSelector=objects.selector(workload),
            )["items"]
            found = [
                r for r in revisions if objects.name(r) == name and objects.owned_by(r, objects.uid(workload))
            ]
            number = str(objects.integer(found[0], "revision")) if found else ""
        return revision_of(workload=workload, name=name, number=int(number) if number.isdigit() else 0)

    def pods(self, *, selector: str) -> list[dict[str, Any]]:
        return self.api.list(f"/api/v1/namespaces/{self.namespace}/pods", labelSelector=selector)

    def mount_failures(self, pods: Sequence[dict[str, Any]]) -> dict[str, str]:
        """Pod name -> the last FailedMount event's message, for pods waiting in ContainerCreating
        without a word (the kubelet says why only in events); {} when events cannot be read."""
        if not any(creating_silently(p) for p in pods):
            return {}
        try:
            found = self.api.list(
                f"/api/v1/namespaces/{self.namespace}/events",
                fieldSelector="involvedObject.kind=Pod,reason=FailedMount",
            )
        except errors.VerifyError:
            return {}  # a courtesy: never the reason a run fails
        latest: dict[str, tuple[str, str]] = {}
        for ev in found:
            pod = objects.text(objects.mapping(ev, "involvedObject"), "name")
            when = objects.text(ev, "lastTimestamp") or objects.text(ev, "eventTime")
            if pod not in latest or when >= latest[pod][0]:
                latest[pod] = (when, objects.text(ev, "message"))
        return {pod: message for pod, (_, message) in latest.items()}

    def selection(self, *, kind: Kind, workload: dict[str, Any], containers: Sequence[str]) -> PodSelection:
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
            found: list[dict[str, Any]] = self.api.get(
                f"/api/v1/namespaces/{self.namespace}/events",
                fieldSelector=f"involvedObject.kind={kind},involvedObject.name={name}",
            )["items"]
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
