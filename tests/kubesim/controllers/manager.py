"""The controller manager: store events and a periodic resync queue work for the controllers,
run on the cluster's loop; garbage collection of what a deleted owner owned."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..record import Recorder
from ..storage.resources import BY_PATH
from ..storage.store import Event, Obj
from .binder import VolumeBinder
from .clusterroles import aggregate
from .cronjob import CronJobController
from .daemonset import DaemonSetController
from .deployment import DeploymentController
from .disruption import DisruptionController
from .job import JobController, finished
from .namespace import NamespaceController
from .podautoscaler import HorizontalController
from .podutil import is_active
from .refmanager import controller_of, selector_matches
from .replicaset import RC, ReplicaSetController
from .resourcequota import ResourceQuotaController
from .scheduler import schedule
from .serviceaccounts import NamespaceDefaults
from .statefulset import StatefulSetController

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
RS = BY_PATH[("apps", "replicasets")]
DEPLOY = BY_PATH[("apps", "deployments")]
STS = BY_PATH[("apps", "statefulsets")]
DS = BY_PATH[("apps", "daemonsets")]
REVISIONS = BY_PATH[("apps", "controllerrevisions")]
JOBS = BY_PATH[("batch", "jobs")]
NAMESPACES = BY_PATH[("", "namespaces")]
ORPHAN_OWNERS = {"Pod": RS, "ReplicaSet": DEPLOY}
PVCS = BY_PATH[("", "persistentvolumeclaims")]


class Controllers:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.pending: set[tuple[str, str, str]] = set()
        # deployments the controller leaves alone (benchmarks set their status by hand)
        self.frozen: set[tuple[str, str]] = set()
        self.scheduler_events = Recorder(self.store, "default-scheduler")
        self.unschedulable: set[tuple[str, str]] = set()  # pods the scheduler found no node for
        self.deployments = DeploymentController(cluster, self.frozen)
        self.replicasets = ReplicaSetController(cluster)
        self.statefulsets = StatefulSetController(cluster)
        self.namespaces = NamespaceController(cluster)
        self.binder = VolumeBinder(cluster)
        # each namespace's default ServiceAccount and kube-root-ca.crt, the CA once the server has one
        self.namespace_defaults = NamespaceDefaults(self.store, lambda: _root_ca(cluster))
        self.daemonsets = DaemonSetController(cluster)
        self.jobs = JobController(cluster)
        self.replication = ReplicaSetController(cluster, RC)
        self.cronjobs = CronJobController(cluster)
        self.autoscalers = HorizontalController(cluster)
        self.disruption = DisruptionController(cluster)
        self.quotas = ResourceQuotaController(self.store)
        self.store.hooks.append(self._on_event)

    # -- triggers ------------------------------------------------------------
    def _on_event(self, ev: Event) -> None:
        kind = ev.res.kind
        meta = ev.obj["metadata"]
        ns = ev.namespace
        self._on_cluster_kinds(ev)
        if kind in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            self.pending.add((kind, ns, meta["name"]))
        elif kind in ("ReplicaSet", "Pod", "ControllerRevision"):
            if kind == "ReplicaSet" and ev.type != "DELETED":
                self.pending.add(("ReplicaSet", ns, meta["name"]))
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller"):
                    self.pending.add((ref["kind"], ns, ref["name"]))
            if ev.type != "DELETED" and kind in ORPHAN_OWNERS and controller_of(ev.obj) is None:
                # an orphan: the controllers whose selector matches it may adopt it (getPodReplicaSets)
                owner_res = ORPHAN_OWNERS[kind]
                for o in self.store.list(owner_res, ns):
                    if selector_matches((o.get("spec") or {}).get("selector"), ev.obj):
                        self.pending.add((owner_res.kind, ns, o["metadata"]["name"]))
            if (
                kind == "Pod"
                and ev.type != "DELETED"
                and not ev.obj["spec"].get("nodeName")
                and not meta.get("deletionTimestamp")
            ):
                self.pending.add(("Schedule", ns, meta["name"]))
            elif kind == "Pod" and (ev.type == "DELETED" or not is_active(ev.obj)):
                self._retry_unschedulable()  # a bound pod left or ended: its room is free again
        elif kind == "Namespace" and meta.get("deletionTimestamp") and ev.type != "DELETED":
            self.pending.add(("Namespace", "", meta["name"]))
        elif kind == "Node":
            for d in self.store.list(DS):
                self.pending.add(("DaemonSet", d["metadata"]["namespace"], d["metadata"]["name"]))
            self._retry_unschedulable()
        elif kind == "PersistentVolumeClaim":
            if ev.type == "DELETED":
                self.binder.released(ev.obj)
            else:
                self.pending.add(("Claim", ns, meta["name"]))
            self._retry_unschedulable()
        elif kind == "PersistentVolume" and ev.type != "DELETED":
            for c in self.store.list(PVCS):  # a new volume may fit a waiting claim
                if not c["spec"].get("volumeName"):
                    self.pending.add(("Claim", c["metadata"]["namespace"], c["metadata"]["name"]))
        if ev.type == "DELETED":
            self._collect_garbage(ev.obj)
        self.cluster.wake()

    def _on_cluster_kinds(self, ev: Event) -> None:
        """Triggers of the CronJob, HPA, disruption, quota and ReplicationController controllers:
        their own writes of status only do not wake them again."""
        kind, ns, name = ev.res.kind, ev.namespace, ev.obj["metadata"]["name"]
        spec_changed = ev.old is None or ev.old.get("spec") != ev.obj.get("spec") or ev.type != "MODIFIED"
        own = kind in ("CronJob", "HorizontalPodAutoscaler", "PodDisruptionBudget") and spec_changed
        if own or (kind == "ReplicationController" and ev.type != "DELETED"):
            self.pending.add((kind, ns, name))
        elif kind == "Job" and ev.type != "ADDED":
            ref = controller_of(ev.obj)
            if ref is not None and ref.get("kind") == "CronJob":
                self.pending.add(("CronJob", ns, ref["name"]))
        elif kind == "Pod" and ns:
            for pdb in self.disruption.budgets_for(ns):
                self.pending.add(("PodDisruptionBudget", ns, pdb))
        if kind == "ClusterRole":
            self.pending.add(("Aggregation", "", ""))
        quota_changed = kind == "ResourceQuota" and spec_changed
        if quota_changed or (kind not in ("ResourceQuota", "Event") and ns in self.quotas.namespaces):
            self.pending.add(("Quota", ns, ""))

    def _retry_unschedulable(self) -> None:
        """The scheduling queue moves unschedulable pods back to be tried on a cluster event that
        may make them fit (a node, a pod leaving its node, a claim)."""
        for ns, name in self.unschedulable:
            self.pending.add(("Schedule", ns, name))

    def tick(self) -> None:
        """Periodic resync: progress deadlines and availability depend on the clock."""
        for res in (DEPLOY, STS, DS):
            for d in self.store.list(res):
                self.pending.add((res.kind, d["metadata"]["namespace"], d["metadata"]["name"]))
        for n in self.store.list(NAMESPACES):  # a terminating namespace waits for its pods to stop
            if n["metadata"].get("deletionTimestamp"):
                self.pending.add(("Namespace", "", n["metadata"]["name"]))
        for j in self.store.list(JOBS):  # back-off and activeDeadlineSeconds run on the clock
            if not finished(j):
                self.pending.add(("Job", j["metadata"]["namespace"], j["metadata"]["name"]))
        for res, due in (("CronJob", self.cronjobs.due.due()), ("HorizontalPodAutoscaler", self.autoscalers.due.due())):
            for ns, name in due:  # their next scheduled time or sync period has come
                self.pending.add((res, ns, name))
        for rs in self.store.list(RS):  # a refused pod is tried again after its back-off
            if any(c.get("type") == "ReplicaFailure" for c in (rs.get("status") or {}).get("conditions") or []):
                self.pending.add(("ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"]))

    def run_pending(self) -> bool:
        worked = False
        while self.pending:
            kind, ns, name = self.pending.pop()
            worked = True
            if kind == "Deployment":
                self.deployments.reconcile(ns, name)
            elif kind == "ReplicaSet":
                self.replicasets.reconcile(ns, name)
            elif kind == "StatefulSet":
                self.statefulsets.reconcile(ns, name)
            elif kind == "DaemonSet":
                self.daemonsets.reconcile(ns, name)
            elif kind == "Job":
                self.jobs.reconcile(ns, name)
            elif kind == "ReplicationController":
                self.replication.reconcile(ns, name)
            elif kind == "CronJob":
                self.cronjobs.reconcile(ns, name)
            elif kind == "HorizontalPodAutoscaler":
                self.autoscalers.reconcile(ns, name)
            elif kind == "PodDisruptionBudget":
                self.disruption.reconcile(ns, name)
            elif kind == "Quota":
                self.quotas.reconcile(ns)
            elif kind == "Aggregation":
                aggregate(self.store)
            elif kind == "Namespace":
                self.namespaces.reconcile(name)
            elif kind == "Claim":
                self.binder.reconcile(ns, name)
            elif kind == "Schedule":
                if schedule(self.store, ns, name, events=self.scheduler_events):
                    self.unschedulable.discard((ns, name))
                else:
                    self.unschedulable.add((ns, name))
        return worked

    # -- garbage collection -----------------------------------------------------
    def _collect_garbage(self, owner: Obj) -> None:
        uid = owner["metadata"]["uid"]
        for res in (RS, REVISIONS, PODS, JOBS):
            for o in self.store.list(res, owner["metadata"].get("namespace")):
                if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or []):
                    self.cluster.delete_object(
                        res,
                        o["metadata"]["namespace"],
                        o["metadata"]["name"],
                        grace=None,
                        propagation="Background",
                    )


def _root_ca(cluster: Cluster) -> str | None:
    path = getattr(cluster, "ca_path", None)
    return None if path is None else str(path.read_text())
