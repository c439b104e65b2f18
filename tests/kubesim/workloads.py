"""StatefulSet and DaemonSet controllers with their ControllerRevision history, and the scheduling
predicates the scheduler and the DaemonSet controller share.

Traced from kube-controller-manager: `pkg/controller/statefulset/stateful_set_control.go` and
`stateful_set_utils.go`, `pkg/controller/daemon/daemon_controller.go` and `update.go`,
`pkg/controller/history/controller_history.go`; apiserver defaulting from `pkg/apis/apps/v1/defaults.go`.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import struct
from typing import TYPE_CHECKING, Any

from .api import _default_pod_spec
from .errors import ApiError
from .patch import labels_match, selector_from_match
from .resources import BY_PATH
from .store import TEMPLATE_GENERATION, Obj

if TYPE_CHECKING:
    from .controllers import Controllers

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
STS = BY_PATH[("apps", "statefulsets")]
DS = BY_PATH[("apps", "daemonsets")]
REVISIONS = BY_PATH[("apps", "controllerrevisions")]

REVISION_LABEL = "controller-revision-hash"  # apps.ControllerRevisionHashLabelKey
CR_HASH_LABEL = "controller.kubernetes.io/hash"  # history.ControllerRevisionHashLabel
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


# -- hashing (history.HashControllerRevision, controller.ComputeHash) ----------------------------


def safe_encode(s: str) -> str:
    """`rand.SafeEncodeString`: each character mapped into an alphabet without vowels."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def fnv32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= b
    return h


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def revision_patch(obj: Obj) -> Obj:
    """`getPatch`: the strategic-merge patch that restores this pod template (what a revision stores)."""
    tpl = copy.deepcopy(obj["spec"].get("template") or {})
    tpl["$patch"] = "replace"
    return {"spec": {"template": tpl}}


def revision_template(rev: Obj) -> Obj:
    tpl = copy.deepcopy(((rev.get("data") or {}).get("spec") or {}).get("template") or {})
    tpl.pop("$patch", None)
    return tpl


# -- apiserver defaulting and validation -----------------------------------------------------------


def default_workload(kind: str, obj: Obj) -> None:
    """SetDefaults_StatefulSet / SetDefaults_DaemonSet, plus the selector checks of validation."""
    name = (obj.get("metadata") or {}).get("name", "")
    spec = obj.setdefault("spec", {})
    strat = spec.get("updateStrategy")
    if not isinstance(strat, dict):
        strat = spec["updateStrategy"] = {}
    if kind == "StatefulSet":
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        if not strat.get("type"):
            strat["type"] = "RollingUpdate"
            if strat.get("rollingUpdate") is None:
                strat["rollingUpdate"] = {}
        ru = strat.get("rollingUpdate")
        if strat["type"] == "RollingUpdate" and isinstance(ru, dict) and ru.get("partition") is None:
            ru["partition"] = 0
        policy = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(policy, dict):
            policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
    else:
        if not strat.get("type"):
            strat["type"] = "RollingUpdate"
        if strat["type"] == "RollingUpdate":
            ru = strat.get("rollingUpdate")
            if not isinstance(ru, dict):
                ru = strat["rollingUpdate"] = {}
            if ru.get("maxUnavailable") is None:
                ru["maxUnavailable"] = 1
            if ru.get("maxSurge") is None:
                ru["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        tpl = spec["template"] = {}
    _default_pod_spec(tpl.setdefault("spec", {}))
    if not spec.get("selector"):
        raise _invalid(kind, name, "spec.selector", "FieldValueRequired", "Required value")
    labels = (tpl.get("metadata") or {}).get("labels") or {}
    if not labels_match(labels, selector_from_match(spec["selector"])):
        pairs = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items()))
        raise _invalid(
            kind,
            name,
            "spec.template.metadata.labels",
            "FieldValueInvalid",
            f"Invalid value: map[string]string{{{pairs}}}: `selector` does not match template `labels`",
        )


def _invalid(kind: str, name: str, field: str, reason: str, message: str) -> ApiError:
    """`errors.NewInvalid` for an apps kind: the message names `Kind.apps`, the details kind and group."""
    return ApiError(
        422,
        "Invalid",
        f'{kind}.apps "{name}" is invalid: {field}: {message}',
        {
            "name": name,
            "group": "apps",
            "kind": kind,
            "causes": [{"reason": reason, "message": message, "field": field}],
        },
    )


# -- pod predicates -----------------------------------------------------------------------------------


def is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def is_available(pod: Obj, min_ready: int, now: dt.datetime) -> bool:
    """`podutil.IsPodAvailable`."""
    if not is_ready(pod):
        return False
    if min_ready <= 0:
        return True
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("lastTransitionTime"):
            since = dt.datetime.strptime(c["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
            return (now - since).total_seconds() > min_ready
    return False


def terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def owned_by(obj: Obj, owner: Obj) -> bool:
    return any(
        r.get("uid") == owner["metadata"]["uid"] and r.get("controller")
        for r in obj["metadata"].get("ownerReferences") or []
    )


def controller_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def scaled(v: Any, total: int, *, round_up: bool) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(v, str) and v.endswith("%"):
        x = int(v[:-1]) * total / 100
        return int(-(-x // 1)) if round_up else int(x // 1)
    return int(v)


# -- scheduling predicates (scheduler plugins NodeAffinity, TaintToleration, NodeUnschedulable) ---


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """`Toleration.ToleratesTaint`."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return bool(op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or ""))


def untolerated(taints: list[Obj], tolerations: list[Obj], effects: tuple[str, ...]) -> list[Obj]:
    return [
        t for t in taints if t.get("effect") in effects and not any(tolerates(tol, t) for tol in tolerations)
    ]


def _requirement(req: Obj, value: str | None) -> bool:
    op = req.get("operator")
    vals = [str(v) for v in req.get("values") or []]
    if op == "In":
        return value is not None and value in vals
    if op == "NotIn":
        return value is None or value not in vals
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and vals:
        try:
            a, b = int(value), int(vals[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_affinity_matches(spec: Obj, node: Obj) -> bool:
    """`nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: spec.nodeSelector and the required
    node affinity terms (ORed; within a term matchExpressions on labels and matchFields on
    `metadata.name` are ANDed)."""
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if not required or terms is None:
        return True
    for term in terms:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches nothing
        if all(_requirement(r, labels.get(r.get("key", ""))) for r in exprs) and all(
            _requirement(r, node["metadata"]["name"] if r.get("key") == "metadata.name" else None)
            for r in fields
        ):
            return True
    return False


def node_fits(spec: Obj, node: Obj) -> bool:
    """Whether the scheduler may bind a pod with this spec to the node."""
    if spec.get("nodeName") and spec["nodeName"] != node["metadata"]["name"]:
        return False
    if not node_affinity_matches(spec, node):
        return False
    tolerations = spec.get("tolerations") or []
    nspec = node.get("spec") or {}
    if nspec.get("unschedulable") and not any(
        tolerates(t, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}) for t in tolerations
    ):
        return False
    return not untolerated(nspec.get("taints") or [], tolerations, ("NoSchedule", "NoExecute"))


def add_daemon_tolerations(spec: Obj) -> None:
    """`util.AddOrUpdateDaemonPodTolerations`."""
    wanted = [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        (UNSCHEDULABLE_TAINT, "NoSchedule"),
    ]
    if spec.get("hostNetwork"):
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    tols = list(spec.get("tolerations") or [])
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        same = [i for i, t in enumerate(tols) if t.get("key") == key and t.get("effect") == effect]
        if same:
            tols[same[0]] = new
        else:
            tols.append(new)
    spec["tolerations"] = tols


def target_node(pod: Obj) -> str:
    """`util.GetTargetNodeName`: spec.nodeName, else the node the DaemonSet's affinity pins."""
    if pod["spec"].get("nodeName"):
        return str(pod["spec"]["nodeName"])
    required = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if (
                f.get("key") == "metadata.name"
                and f.get("operator") == "In"
                and len(f.get("values") or []) == 1
            ):
                return str(f["values"][0])
    return ""


def pin_to_node(spec: Obj, node: str) -> None:
    """`util.ReplaceDaemonSetPodNodeNameNodeAffinity`."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {})
    na = affinity.setdefault("nodeAffinity", {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(req, dict):
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        req["nodeSelectorTerms"] = [term]


def _pod_sort_key(p: Obj) -> tuple[int, str, str]:
    """`podByCreationTimestampAndPhase`: scheduled first, then oldest, then by name."""
    return (0 if p["spec"].get("nodeName") else 1, p["metadata"]["creationTimestamp"], p["metadata"]["name"])


# -- the controllers ------------------------------------------------------------------------------------


class Workloads:
    def __init__(self, controllers: Controllers) -> None:
        self.ctl = controllers
        self.cluster = controllers.cluster
        self.store = controllers.store

    # -- shared --------------------------------------------------------------------------------
    def _revisions(self, owner: Obj) -> list[Obj]:
        """ControllerRevisions controlled by `owner`, by revision, then age, then name."""
        ns = owner["metadata"]["namespace"]
        revs = [r for r in self.store.list(REVISIONS, ns) if owned_by(r, owner)]
        revs.sort(
            key=lambda r: (
                int(r.get("revision", 0)),
                r["metadata"]["creationTimestamp"],
                r["metadata"]["name"],
            )
        )
        return revs

    def _set_revision_number(self, rev: Obj, number: int) -> Obj:
        ns, name = rev["metadata"]["namespace"], rev["metadata"]["name"]
        return self.store.mutate(REVISIONS, ns, name, lambda o: o.__setitem__("revision", number)) or rev

    def _delete(self, res: Any, pod_or_rev: Obj) -> None:
        meta = pod_or_rev["metadata"]
        if self.store.find(res, meta["namespace"], meta["name"]) is None:
            return
        self.cluster.delete_object(res, meta["namespace"], meta["name"], grace=None, propagation="Background")

    def _new_name(self, ns: str, prefix: str) -> str:
        while True:
            name = prefix + "".join(self.ctl.rng.choice(ALPHANUMS) for _ in range(5))
            if self.store.find(PODS, ns, name) is None:
                return name

    # -- StatefulSet -------------------------------------------------------------------------------
    def reconcile_statefulset(self, ns: str, name: str) -> None:
        sts = self.store.find(STS, ns, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        status = sts.get("status") or {}
        collision = int(status.get("collisionCount") or 0)
        update, collision = self._sts_update_revision(sts, self._revisions(sts), collision)
        revisions = self._revisions(sts)
        current = next(
            (r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")), update
        )
        self._sts_sync_pods(sts, current, update)
        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, sts) and self._ordinal(sts, p) >= 0]
        st = self._sts_status(sts, pods, current, update, collision)
        self.store.mutate(STS, ns, name, lambda o: o.__setitem__("status", st), status=True)
        self._sts_truncate_history(
            sts, pods, revisions, {current["metadata"]["name"], update["metadata"]["name"]}
        )

    @staticmethod
    def _ordinal(sts: Obj, pod: Obj) -> int:
        m = _ORDINAL.match(pod["metadata"]["name"])
        if m is None or m.group(1) != sts["metadata"]["name"]:
            return -1
        return int(m.group(2))

    def _sts_update_revision(self, sts: Obj, revisions: list[Obj], collision: int) -> tuple[Obj, int]:
        """`getStatefulSetRevisions`: the revision of the current template, created or renumbered."""
        data = revision_patch(sts)
        raw = canonical(data)
        nxt = int(revisions[-1].get("revision", 0)) + 1 if revisions else 1
        equal = [r for r in revisions if canonical(r.get("data")) == raw]
        if equal and equal[-1] is revisions[-1]:
            return revisions[-1], collision
        if equal:
            return self._set_revision_number(equal[-1], nxt), collision
        ns = sts["metadata"]["namespace"]
        labels = dict(((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
        while True:
            h = safe_encode(str(fnv32(raw + str(collision).encode())))
            rev_name = f"{sts['metadata']['name'][:223]}-{h}"
            existing = self.store.find(REVISIONS, ns, rev_name)
            if existing is not None:
                if canonical(existing.get("data")) == raw:
                    return existing, collision
                collision += 1
                continue
            meta: Obj = {
                "name": rev_name,
                "labels": {**labels, CR_HASH_LABEL: h},
                "ownerReferences": [controller_ref(sts)],
            }
            if sts["metadata"].get("annotations"):
                meta["annotations"] = dict(sts["metadata"]["annotations"])
            cr = {"metadata": meta, "data": data, "revision": nxt}
            return self.store.create(REVISIONS, ns, cr), collision

    def _sts_pod(self, sts: Obj, rev: Obj, ordinal: int) -> Obj:
        """`newStatefulSetPod` at a revision: the revision's template, identity labels, hostname."""
        tpl = revision_template(rev)
        tmeta = tpl.get("metadata") or {}
        name = f"{sts['metadata']['name']}-{ordinal}"
        labels = dict(tmeta.get("labels") or {})
        labels.update(
            {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: rev["metadata"]["name"]}
        )
        meta: Obj = {
            "name": name,
            "generateName": f"{sts['metadata']['name']}-",
            "labels": labels,
            "ownerReferences": [controller_ref(sts)],
        }
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        pspec = copy.deepcopy(tpl.get("spec") or {})
        pspec["hostname"] = name
        if sts["spec"].get("serviceName"):
            pspec["subdomain"] = sts["spec"]["serviceName"]
        claims = sts["spec"].get("volumeClaimTemplates") or []
        if claims:  # updateStorage; kubesim has no PVCs, the kubelet gives each a plain directory
            names = {c["metadata"]["name"] for c in claims}
            pspec["volumes"] = [
                {
                    "name": c["metadata"]["name"],
                    "persistentVolumeClaim": {"claimName": f"{c['metadata']['name']}-{name}"},
                }
                for c in claims
            ] + [v for v in pspec.get("volumes") or [] if v.get("name") not in names]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": pspec,
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        }

    def _sts_sync_pods(self, sts: Obj, current: Obj, update: Obj) -> None:
        """`updateStatefulSet`: create missing ordinals, replace failed pods, scale down, then roll."""
        ns = sts["metadata"]["namespace"]
        spec = sts["spec"]
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        count = int(spec.get("replicas", 1))
        min_ready = int(spec.get("minReadySeconds") or 0)
        monotonic = spec.get("podManagementPolicy") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        ru = strategy.get("rollingUpdate")
        partition = int(ru.get("partition") or 0) if isinstance(ru, dict) else None
        now = dt.datetime.now(dt.UTC)
        current_replicas = int((sts.get("status") or {}).get("currentReplicas") or 0)

        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, sts)]
        replicas: dict[int, Obj] = {}
        condemned: list[Obj] = []
        for p in pods:
            o = self._ordinal(sts, p)
            if start <= o < start + count:
                replicas[o] = p
            elif o >= 0:
                condemned.append(p)
        condemned.sort(key=lambda p: -self._ordinal(sts, p))

        def unavailable(p: Obj) -> bool:
            """`isUnavailable`: terminating, not running and ready, or not yet available."""
            return terminating(p) or not is_running_and_ready(p) or not is_available(p, min_ready, now)

        # processReplica, in ordinal order
        for o in range(start, start + count):
            pod = replicas.get(o)
            if pod is None:
                at_current = (rolling and ru is None and o < start + current_replicas) or (
                    partition is not None and o < start + partition
                )
                pod = self.store.create(PODS, ns, self._sts_pod(sts, current if at_current else update, o))
                replicas[o] = pod
                if monotonic:
                    return
                continue
            if phase(pod) in ("Failed", "Succeeded"):
                if not terminating(pod):
                    self._delete(PODS, pod)
                if monotonic:
                    return
                continue
            if monotonic and unavailable(pod):
                return

        # processCondemned: scale down from the highest ordinal
        first_unhealthy = next(
            (p for p in [*(replicas[o] for o in sorted(replicas)), *reversed(condemned)] if unavailable(p)),
            None,
        )
        for pod in condemned:
            if terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and unavailable(pod) and pod is not first_unhealthy:
                return
            self._delete(PODS, pod)
            if monotonic:
                return

        if not rolling:  # OnDelete: pods take the update revision when someone deletes them
            return
        update_min = partition or 0
        rev = update["metadata"]["name"]
        for idx in range(count - 1, update_min - 1, -1):
            pod = replicas[start + idx]
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != rev and not terminating(pod):
                self._delete(PODS, pod)
                return
            if unavailable(pod):
                return

    def _sts_status(self, sts: Obj, pods: list[Obj], current: Obj, update: Obj, collision: int) -> Obj:
        """`updateStatus` + `completeRollingUpdate`."""
        spec = sts["spec"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        cur_name, upd_name = current["metadata"]["name"], update["metadata"]["name"]
        replicas = ready = available = cur = upd = 0
        for p in pods:
            if phase(p):
                replicas += 1
            if is_running_and_ready(p):
                ready += 1
                if is_available(p, min_ready, now):
                    available += 1
            if phase(p) and not terminating(p):
                rev = (p["metadata"].get("labels") or {}).get(REVISION_LABEL)
                cur += rev == cur_name
                upd += rev == upd_name
        want = int(spec.get("replicas", 1))
        strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and upd == want and ready == want and replicas == want:
            cur, cur_name = upd, upd_name
        status: Obj = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": cur,
            "updatedReplicas": upd,
            "currentRevision": cur_name,
            "updateRevision": upd_name,
            "collisionCount": collision,
            "availableReplicas": available,
        }
        if (sts.get("status") or {}).get("conditions"):
            status["conditions"] = sts["status"]["conditions"]
        omitempty = ("readyReplicas", "currentReplicas", "updatedReplicas")
        return {k: v for k, v in status.items() if v or k not in omitempty}

    def _sts_truncate_history(self, sts: Obj, pods: list[Obj], revisions: list[Obj], live: set[str]) -> None:
        live |= {(p["metadata"].get("labels") or {}).get(REVISION_LABEL, "") for p in pods}
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = int(sts["spec"].get("revisionHistoryLimit", 10))
        if limit < 0 or len(history) <= limit:
            return
        for r in history[: len(history) - limit]:
            self._delete(REVISIONS, r)

    # -- DaemonSet ----------------------------------------------------------------------------------
    def reconcile_daemonset(self, ns: str, name: str) -> None:
        ds = self.store.find(DS, ns, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        sel = ds["spec"].get("selector") or {}
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            return  # "This daemon set is selecting all pods. A non-empty selector is required."
        nodes = self.store.list(NODES)
        cur, old = self._ds_history(ds)
        ds = self.store.find(DS, ns, name) or ds  # the history may have bumped collisionCount
        h = (cur["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        self._ds_manage(ds, nodes, h)
        if (ds["spec"].get("updateStrategy") or {}).get("type") == "RollingUpdate":
            self._ds_rolling_update(ds, nodes, h)
        self._ds_cleanup_history(ds, old)
        self._ds_status(ds, nodes, h)

    @staticmethod
    def _template_generation(ds: Obj) -> str | None:
        v = (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)
        return str(v) if v is not None and str(v).isdigit() else None

    def _is_updated(self, ds: Obj, pod: Obj, h: str) -> bool:
        """`util.IsPodUpdated`: the revision hash matches, or the template generation does."""
        labels = pod["metadata"].get("labels") or {}
        gen = self._template_generation(ds)
        return bool(h and labels.get(REVISION_LABEL) == h) or (
            gen is not None and labels.get(TEMPLATE_GENERATION_LABEL) == gen
        )

    def _ds_history(self, ds: Obj) -> tuple[Obj, list[Obj]]:
        """`constructHistory`: the revision matching the template (created if missing) and the rest."""
        ns = ds["metadata"]["namespace"]
        data = revision_patch(ds)
        raw = canonical(data)
        revisions = self._revisions(ds)
        current = [r for r in revisions if canonical(r.get("data")) == raw]
        old = [r for r in revisions if canonical(r.get("data")) != raw]
        nxt = max((int(r.get("revision", 0)) for r in old), default=0) + 1
        if not current:
            return self._ds_snapshot(ds, data, nxt), old
        keep = current[0]
        for r in current:
            if int(r.get("revision", 0)) >= int(keep.get("revision", 0)):
                keep = r
        keep_hash = (keep["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        for r in current:
            if r is keep:
                continue
            for p in self.store.list(PODS, ns):
                if owned_by(p, ds) and (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != keep_hash:
                    self.store.mutate(
                        PODS,
                        ns,
                        p["metadata"]["name"],
                        lambda o: (
                            o["metadata"].setdefault("labels", {}).__setitem__(REVISION_LABEL, keep_hash)
                        ),
                    )
            self._delete(REVISIONS, r)
        if int(keep.get("revision", 0)) < nxt:
            keep = self._set_revision_number(keep, nxt)
        return keep, old

    def _ds_snapshot(self, ds: Obj, data: Obj, number: int) -> Obj:
        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        tpl = ds["spec"].get("template") or {}
        for _ in range(100):
            collision = (ds.get("status") or {}).get("collisionCount")
            h = compute_hash(tpl, collision)
            existing = self.store.find(REVISIONS, ns, f"{name}-{h}")
            if existing is not None:
                if canonical(existing.get("data")) == canonical(data):
                    return existing
                ds = self._bump_collision(ds, int(collision or 0) + 1)
                continue
            meta: Obj = {
                "name": f"{name}-{h}",
                "labels": {**((tpl.get("metadata") or {}).get("labels") or {}), REVISION_LABEL: h},
                "ownerReferences": [controller_ref(ds)],
            }
            if ds["metadata"].get("annotations"):
                meta["annotations"] = dict(ds["metadata"]["annotations"])
            return self.store.create(REVISIONS, ns, {"metadata": meta, "data": data, "revision": number})
        raise RuntimeError(f"daemonset {name}: no free revision name")

    def _bump_collision(self, ds: Obj, count: int) -> Obj:
        def bump(o: Obj) -> None:
            o.setdefault("status", {})["collisionCount"] = count

        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        return self.store.mutate(DS, ns, name, bump, status=True) or ds

    def _node_to_pods(self, ds: Obj) -> dict[str, list[Obj]]:
        """`getNodesToDaemonPods`: the DaemonSet's pods by target node (deleted terminal pods left out)."""
        out: dict[str, list[Obj]] = {}
        for p in self.store.list(PODS, ds["metadata"]["namespace"]):
            if not owned_by(p, ds):
                continue
            if terminating(p) and phase(p) in ("Failed", "Succeeded"):
                continue
            out.setdefault(target_node(p), []).append(p)
        return out

    @staticmethod
    def should_run(node: Obj, ds: Obj) -> tuple[bool, bool]:
        """`NodeShouldRunDaemonPod`: (should run, should continue running). `spec.unschedulable` plays no
        part: daemon pods tolerate the unschedulable taint."""
        tspec = copy.deepcopy((ds["spec"].get("template") or {}).get("spec") or {})
        if tspec.get("nodeName") and tspec["nodeName"] != node["metadata"]["name"]:
            return False, False
        add_daemon_tolerations(tspec)
        if not node_affinity_matches(tspec, node):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if untolerated(taints, tspec["tolerations"], ("NoSchedule", "NoExecute")):
            return False, not untolerated(taints, tspec["tolerations"], ("NoExecute",))
        return True, True

    def _ds_manage(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`manage` + `podsShouldBeOnNode`."""
        node_pods = self._node_to_pods(ds)
        surge = _allows_surge(ds)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        create: list[str] = []
        delete: list[Obj] = []
        for node in nodes:
            nname = node["metadata"]["name"]
            run, keep = self.should_run(node, ds)
            exists = nname in node_pods
            pods = node_pods.get(nname, [])
            if run and not exists:
                create.append(nname)
            elif keep:
                running = []
                for p in pods:
                    if terminating(p):
                        continue
                    if phase(p) in ("Failed", "Succeeded"):
                        delete.append(p)
                    else:
                        running.append(p)
                running.sort(key=_pod_sort_key)
                if not surge:
                    delete.extend(running[1:])
                    continue
                if len(running) <= 1:
                    if not running and run:
                        create.append(nname)
                    continue
                oldest_new = oldest_old = None
                for p in running:
                    is_new = (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == h
                    if is_new and oldest_new is None:
                        oldest_new = p
                    elif not is_new and oldest_old is None:
                        oldest_old = p
                    else:
                        delete.append(p)
                if (
                    oldest_new is not None
                    and oldest_old is not None
                    and (not is_ready(oldest_old) or is_available(oldest_new, min_ready, now))
                ):
                    delete.append(oldest_old)
            elif not keep and exists:
                delete.extend(p for p in pods if not terminating(p))
        known = {n["metadata"]["name"] for n in nodes}
        for nname, pods in node_pods.items():
            if nname not in known:
                delete.extend(p for p in pods if not p["spec"].get("nodeName"))
        self._ds_sync_nodes(ds, delete, create, h)

    def _ds_sync_nodes(self, ds: Obj, delete: list[Obj], create: list[str], h: str) -> None:
        ns = ds["metadata"]["namespace"]
        tpl = copy.deepcopy(ds["spec"].get("template") or {})
        tmeta = tpl.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        gen = self._template_generation(ds)
        if gen is not None:
            labels[TEMPLATE_GENERATION_LABEL] = gen
        if h:
            labels[REVISION_LABEL] = h
        for nname in create:
            pspec = copy.deepcopy(tpl.get("spec") or {})
            add_daemon_tolerations(pspec)
            pin_to_node(pspec, nname)
            meta: Obj = {
                "name": self._new_name(ns, f"{ds['metadata']['name']}-"),
                "generateName": f"{ds['metadata']['name']}-",
                "labels": dict(labels),
                "ownerReferences": [controller_ref(ds)],
            }
            if tmeta.get("annotations"):
                meta["annotations"] = dict(tmeta["annotations"])
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": pspec,
                "status": {"phase": "Pending", "qosClass": "BestEffort"},
            }
            self.store.create(PODS, ns, pod)
        for p in delete:
            self._delete(PODS, p)

    def _ds_counts(self, ds: Obj, nodes: list[Obj], node_pods: dict[str, list[Obj]]) -> tuple[int, int, int]:
        """`updatedDesiredNodeCounts`: (maxSurge, maxUnavailable, desired); adds empty entries for
        nodes that should run a pod and have none."""
        desired = 0
        for node in nodes:
            if self.should_run(node, ds)[0]:
                desired += 1
                node_pods.setdefault(node["metadata"]["name"], [])
        ru = (ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        unavailable = scaled(ru.get("maxUnavailable", 1), desired, round_up=True)
        surge = scaled(ru.get("maxSurge", 0), desired, round_up=True)
        if desired > 0 and unavailable == 0 and surge == 0:
            unavailable = 1
        return surge, unavailable, desired

    def _updated_pods_on_node(self, ds: Obj, pods: list[Obj], h: str) -> tuple[Obj | None, Obj | None, bool]:
        """`findUpdatedPodsOnNode`: (new pod, old pod, at most one of each)."""
        new = old = None
        for p in pods:
            if terminating(p):
                continue
            if self._is_updated(ds, p, h):
                if new is not None:
                    return None, None, False
                new = p
            else:
                if old is not None:
                    return None, None, False
                old = p
        return new, old, True

    def _ds_rolling_update(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`rollingUpdate`: replace old pods within maxUnavailable, or surge new ones within maxSurge."""
        node_pods = self._node_to_pods(ds)
        surge, max_unavailable, desired = self._ds_counts(ds, nodes, node_pods)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        by_name = {n["metadata"]["name"]: n for n in nodes}
        if surge == 0:
            unavailable = 0
            replace: list[Obj] = []
            candidates: list[Obj] = []
            for nname in sorted(node_pods):
                new, old, ok = self._updated_pods_on_node(ds, node_pods[nname], h)
                if not ok or (old is None) == (new is None):
                    unavailable += 1
                elif new is not None:
                    if not is_available(new, min_ready, now):
                        unavailable += 1
                elif old is not None:
                    if not is_available(old, min_ready, now):
                        replace.append(old)
                        unavailable += 1
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            room = min(max(max_unavailable - unavailable, 0), len(candidates))
            self._ds_sync_nodes(ds, replace + candidates[:room], [], h)
            return
        to_delete: list[Obj] = []
        not_run: list[Obj] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surging = available = 0
        for nname in sorted(node_pods):
            new, old, ok = self._updated_pods_on_node(ds, node_pods[nname], h)
            if not ok:
                surging += 1
                continue
            if old is not None:
                available += is_available(old, min_ready, now)
            elif new is not None:
                available += is_available(new, min_ready, now)
            if old is None:
                continue
            node = by_name.get(nname)
            run = node is not None and self.should_run(node, ds)[0]
            if new is None:
                if not is_available(old, min_ready, now):
                    if not run:
                        to_delete.append(old)
                        continue
                    allowed_nodes.append(nname)
                elif not run:
                    not_run.append(old)
                elif surging < surge:
                    candidate_nodes.append(nname)
            elif not is_available(new, min_ready, now):
                surging += 1
            else:
                to_delete.append(old)
        deletable = min(max(available - desired, 0), len(not_run))
        to_delete += not_run[:deletable]
        room = min(max(surge - surging, 0), len(candidate_nodes))
        self._ds_sync_nodes(ds, to_delete, allowed_nodes + candidate_nodes[:room], h)

    def _ds_cleanup_history(self, ds: Obj, old: list[Obj]) -> None:
        kill = len(old) - int(ds["spec"].get("revisionHistoryLimit", 10))
        if kill <= 0:
            return
        live = {
            (p["metadata"].get("labels") or {}).get(REVISION_LABEL)
            for p in self.store.list(PODS, ds["metadata"]["namespace"])
            if owned_by(p, ds)
        }
        for r in sorted(old, key=lambda r: int(r.get("revision", 0))):
            if kill <= 0:
                break
            if (r["metadata"].get("labels") or {}).get(REVISION_LABEL) in live:
                continue
            self._delete(REVISIONS, r)
            kill -= 1

    def _ds_status(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`updateDaemonSetStatus`: counted on the oldest pod of each node."""
        ds = self.store.find(DS, ds["metadata"]["namespace"], ds["metadata"]["name"]) or ds
        node_pods = self._node_to_pods(ds)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        desired = current = mis = ready = updated = available = 0
        for node in nodes:
            pods = sorted(node_pods.get(node["metadata"]["name"], []), key=_pod_sort_key)
            if self.should_run(node, ds)[0]:
                desired += 1
                if not pods:
                    continue
                current += 1
                if is_ready(pods[0]):
                    ready += 1
                    available += is_available(pods[0], min_ready, now)
                updated += self._is_updated(ds, pods[0], h)
            elif pods:
                mis += 1
        old = ds.get("status") or {}
        status: Obj = {
            "currentNumberScheduled": current,
            "numberMisscheduled": mis,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        for k in ("collisionCount", "conditions"):
            if old.get(k) is not None:
                status[k] = old[k]
        omitempty = ("updatedNumberScheduled", "numberAvailable", "numberUnavailable")
        status = {k: v for k, v in status.items() if v or k not in omitempty}
        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        self.store.mutate(DS, ns, name, lambda o: o.__setitem__("status", status), status=True)


def compute_hash(template: Obj, collision: int | None) -> str:
    """`controller.ComputeHash`: FNV-1a of the template (here its canonical JSON) and the collision count."""
    data = canonical(template)
    if collision is not None:
        data += struct.pack("<I", int(collision) & 0xFFFFFFFF) + b"\0\0\0\0"
    return safe_encode(str(fnv32a(data)))


def _allows_surge(ds: Obj) -> bool:
    strategy = ds["spec"].get("updateStrategy") or {}
    if strategy.get("type") != "RollingUpdate":
        return False
    v = (strategy.get("rollingUpdate") or {}).get("maxSurge")
    return v is not None and scaled(v, 1, round_up=True) > 0
