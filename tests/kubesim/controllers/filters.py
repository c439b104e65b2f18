"""The scheduler's Filter plugins and its FitError text, after kubernetes/kubernetes
pkg/scheduler/framework/plugins (nodeunschedulable, nodename, tainttoleration, nodeaffinity,
nodeports, noderesources/fit.go, volumebinding, interpodaffinity) and framework/types.go
FitError.Error(): `0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are
available: 3 No preemption victims found for incoming pod..` (the doubled period is upstream's:
the preemption message ends in one, SeparatorFormat adds another). Pure logic: plain data in,
reasons out.

Preemption is not emulated (kubesim has no PriorityClasses, so no pod is ever a victim): the
PostFilter message says per node what DefaultPreemption says when it finds none."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..storage.quantity import BadQuantity, milli, whole
from ..storage.selection import labels_match, selector_from_match
from ..storage.store import Obj
from .scheduling import UNSCHEDULABLE_TAINT, node_affinity_matches, tolerates, untolerated

# Status codes: a node failing with UNRESOLVABLE is one preemption cannot help
UNSCHEDULABLE, UNRESOLVABLE = "Unschedulable", "UnschedulableAndUnresolvable"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


@dataclass
class NodeInfo:
    """framework.NodeInfo: a node and the pods bound to it that are not terminal."""

    node: Obj
    pods: list[Obj] = field(default_factory=list)
    requested: Counter[str] = field(default_factory=Counter)  # cpu in millicores, the rest in units
    ports: set[tuple[str, str, int]] = field(default_factory=set)  # (hostIP, protocol, hostPort)
    anti: list[Obj] = field(default_factory=list)  # PodsWithRequiredAntiAffinity

    @property
    def name(self) -> str:
        return str(self.node["metadata"]["name"])

    def add(self, pod: Obj) -> None:
        self.pods.append(pod)
        if pod["spec"].get("affinity") and _terms(pod, "podAntiAffinity"):
            self.anti.append(pod)
        requests, ports = _pod_usage(pod)
        self.requested.update(requests)
        self.ports.update(ports)


# a pod's requests and host ports, by uid: its spec's containers never change once created, and
# the scheduler adds up every bound pod for each pod it schedules (1,000-pod benchmarks)
_USAGE: dict[str, tuple[Counter[str], frozenset[tuple[str, str, int]]]] = {}


def _pod_usage(pod: Obj) -> tuple[Counter[str], frozenset[tuple[str, str, int]]]:
    uid = str(pod["metadata"].get("uid", ""))
    got = _USAGE.get(uid)
    if got is None:
        if len(_USAGE) > 20_000:
            _USAGE.clear()
        got = _USAGE[uid] = (pod_requests(pod["spec"]), frozenset(host_ports(pod["spec"])))
    return got


def _amount(resource: str, value: object) -> int:
    try:
        return milli(value) if resource == "cpu" else whole(value)
    except BadQuantity:
        return 0


def _container_requests(c: Obj) -> Counter[str]:
    """A container's requests; a limit without a request is its request (SetDefaults_Container)."""
    res = c.get("resources") or {}
    merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    return Counter({r: _amount(r, v) for r, v in merged.items()})


def pod_requests(spec: Obj) -> Counter[str]:
    """resourcehelper.PodRequests: the app containers and sidecars summed, or the largest init
    container (with the sidecars started before it) if that is more, plus the pod overhead."""
    total: Counter[str] = Counter()
    for c in spec.get("containers") or []:
        total.update(_container_requests(c))
    sidecars: Counter[str] = Counter()
    init_max: Counter[str] = Counter()
    for c in spec.get("initContainers") or []:
        req = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            sidecars.update(req)
            req = Counter(sidecars)
        else:
            req.update(sidecars)
        for r, v in req.items():
            init_max[r] = max(init_max[r], v)
    total.update(sidecars)
    for r, v in init_max.items():
        total[r] = max(total[r], v)
    for r, v in (spec.get("overhead") or {}).items():
        total[r] += _amount(r, v)
    return total


def host_ports(spec: Obj) -> set[tuple[str, str, int]]:
    """nodeports: the (hostIP, protocol, hostPort) a pod asks for (0.0.0.0 when no hostIP)."""
    out = set()
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.add((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(p["hostPort"])))
    return out


def _ports_conflict(want: set[tuple[str, str, int]], used: set[tuple[str, str, int]]) -> bool:
    """HostPortInfo.CheckConflict: same protocol and port, and either IP is 0.0.0.0 or equal."""
    for ip, proto, port in want:
        for uip, uproto, uport in used:
            if proto == uproto and port == uport and (ip == uip or "0.0.0.0" in (ip, uip)):
                return True
    return False


def _fit_reasons(pod: Obj, info: NodeInfo) -> list[str]:
    """noderesources/fit.go fitsRequest: `Too many pods`, then `Insufficient <resource>` for
    each requested resource the node's allocatable cannot hold beside what it holds already."""
    alloc = info.node.get("status", {}).get("allocatable") or {}
    reasons = []
    if len(info.pods) + 1 > _amount("pods", alloc.get("pods", 110)):
        reasons.append("Too many pods")
    for r, want in sorted(pod_requests(pod["spec"]).items(), key=lambda kv: _ORDER.get(kv[0], 9)):
        if want <= 0:
            continue
        if want > _amount(r, alloc.get(r, 0)) - info.requested[r]:
            reasons.append(f"Insufficient {r}")
    return reasons


_ORDER = {"cpu": 0, "memory": 1, "ephemeral-storage": 2}


def _term_matches(term: Obj, owner: Obj, other: Obj) -> bool:
    """An affinity term of `owner`'s matches pod `other`: namespace (the term's namespaces, else
    the owner's; a namespaceSelector is taken as all namespaces) and labelSelector."""
    namespaces = term.get("namespaces") or []
    ns = other["metadata"].get("namespace")
    if term.get("namespaceSelector") is None and ns not in (
        namespaces or [owner["metadata"].get("namespace")]
    ):
        return False
    sel = term.get("labelSelector")
    if sel is None:
        return False  # a nil selector matches nothing
    return labels_match(other["metadata"].get("labels") or {}, selector_from_match(sel))


def _terms(pod: Obj, kind: str) -> list[Obj]:
    aff = ((pod["spec"].get("affinity") or {}).get(kind) or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return list(aff or [])


def _same_domain(a: Obj, b: Obj, key: str) -> bool:
    la, lb = a["metadata"].get("labels") or {}, b["metadata"].get("labels") or {}
    return key in la and key in lb and la[key] == lb[key]


def _interpod_reason(pod: Obj, info: NodeInfo, infos: list[NodeInfo]) -> str:
    """interpodaffinity/filtering.go: required pod affinity (every term met by a pod in the
    node's topology domain, or by none anywhere and the pod itself), the pod's required
    anti-affinity, then the existing pods' required anti-affinity against it."""
    node = info.node
    affinity = _terms(pod, "podAffinity")
    for term in affinity:
        key = term.get("topologyKey", "")
        here = any(
            _term_matches(term, pod, p) for i in infos if _same_domain(i.node, node, key) for p in i.pods
        )
        anywhere = any(_term_matches(term, pod, p) for i in infos for p in i.pods)
        if not here and (
            anywhere or not _term_matches(term, pod, pod) or key not in (node["metadata"].get("labels") or {})
        ):
            return "node(s) didn't match pod affinity rules"
    for term in _terms(pod, "podAntiAffinity"):
        key = term.get("topologyKey", "")
        if any(_term_matches(term, pod, p) for i in infos if _same_domain(i.node, node, key) for p in i.pods):
            return "node(s) didn't match pod anti-affinity rules"
    for i in infos:
        for p in i.anti:
            for term in _terms(p, "podAntiAffinity"):
                if _same_domain(i.node, node, term.get("topologyKey", "")) and _term_matches(term, p, pod):
                    return "node(s) didn't satisfy existing pods anti-affinity rules"
    return ""


def node_reasons(pod: Obj, info: NodeInfo, infos: list[NodeInfo]) -> tuple[str, list[str]]:
    """The first failing Filter plugin's (code, reasons) for this node, in the default profile's
    order; ("", []) when the pod fits."""
    spec, node = pod["spec"], info.node
    nspec = node.get("spec") or {}
    tolerations = spec.get("tolerations") or []
    if nspec.get("unschedulable") and not any(
        tolerates(t, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}) for t in tolerations
    ):
        return UNRESOLVABLE, ["node(s) were unschedulable"]
    if spec.get("nodeName") and spec["nodeName"] != info.name:
        return UNRESOLVABLE, ["node(s) didn't match the requested node name"]
    bad = untolerated(nspec.get("taints") or [], tolerations, ("NoSchedule", "NoExecute"))
    if bad:
        t = bad[0]
        return UNRESOLVABLE, [f"node(s) had untolerated taint {{{t.get('key', '')}: {t.get('value', '')}}}"]
    if not node_affinity_matches(spec, node):
        return UNRESOLVABLE, ["node(s) didn't match Pod's node affinity/selector"]
    if _ports_conflict(host_ports(spec), info.ports):
        return UNSCHEDULABLE, ["node(s) didn't have free ports for the requested pod ports"]
    fit = _fit_reasons(pod, info)
    if fit:
        return UNSCHEDULABLE, fit
    spread = _spread_reason(pod, info, infos)
    if spread:
        return spread
    why = _interpod_reason(pod, info, infos) if _affinity_in_play(pod, infos) else ""
    if why:
        code = UNRESOLVABLE if why == "node(s) didn't match pod affinity rules" else UNSCHEDULABLE
        return code, [why]
    return "", []


def _spread_reason(pod: Obj, info: NodeInfo, infos: list[NodeInfo]) -> tuple[str, list[str]] | None:
    """podtopologyspread/filtering.go for the DoNotSchedule constraints: the node must carry
    each topologyKey, and placing the pod in its domain may not make that domain's count of
    matching pods exceed the smallest domain's by more than maxSkew. Domains come from the nodes
    the pod's node affinity/selector admits (nodeAffinityPolicy Honor, nodeTaintsPolicy
    Ignore); pods being deleted are not counted. minDomains and matchLabelKeys are not read."""
    constraints = [
        c
        for c in pod["spec"].get("topologySpreadConstraints") or []
        if c.get("whenUnsatisfiable") == "DoNotSchedule"
    ]
    if not constraints:
        return None
    labels = info.node["metadata"].get("labels") or {}
    if any(c.get("topologyKey", "") not in labels for c in constraints):
        return UNRESOLVABLE, ["node(s) didn't match pod topology spread constraints (missing required label)"]
    ns = pod["metadata"].get("namespace")
    for c in constraints:
        key, selector = c.get("topologyKey", ""), selector_from_match(c.get("labelSelector"))
        counts: Counter[str] = Counter()
        for i in infos:
            value = (i.node["metadata"].get("labels") or {}).get(key)
            if value is None or not node_affinity_matches(pod["spec"], i.node):
                continue
            counts[value] += sum(
                1
                for p in i.pods
                if p["metadata"].get("namespace") == ns
                and not p["metadata"].get("deletionTimestamp")
                and c.get("labelSelector") is not None
                and labels_match(p["metadata"].get("labels") or {}, selector)
            )
        own = c.get("labelSelector") is not None and labels_match(
            pod["metadata"].get("labels") or {}, selector
        )
        skew = counts[labels[key]] + int(own) - min(counts.values(), default=0)
        if skew > int(c.get("maxSkew") or 1):
            return UNSCHEDULABLE, ["node(s) didn't match pod topology spread constraints"]
    return None


def _affinity_in_play(pod: Obj, infos: list[NodeInfo]) -> bool:
    if _terms(pod, "podAffinity") or _terms(pod, "podAntiAffinity"):
        return True
    return any(i.anti for i in infos)


def admission_error(pod: Obj, node: Obj, admitted: list[Obj]) -> tuple[str, str] | None:
    """The kubelet's own check before it runs a pod (pkg/kubelet/lifecycle/predicate.go
    GeneralPredicates, noderesources.Fits): a pod bound straight to a node by `spec.nodeName`
    (no scheduler) that the node's allocatable cannot hold beside the pods it runs is rejected,
    (reason, message) such as ("OutOfcpu", "Pod was rejected: Node didn't have enough
    resource: cpu, requested: 64000, used: 0, capacity: 8000")."""
    info = NodeInfo(node)
    for p in admitted:
        info.add(p)
    alloc = node.get("status", {}).get("allocatable") or {}
    want = pod_requests(pod["spec"])
    checks = [("pods", 1, len(info.pods), _amount("pods", alloc.get("pods", 110)))]
    checks += [
        (r, v, info.requested[r], _amount(r, alloc.get(r, 0)))
        for r, v in sorted(want.items(), key=lambda kv: _ORDER.get(kv[0], 9))
        if v > 0
    ]
    for r, requested, used, capacity in checks:
        if requested > capacity - used:
            message = f"Node didn't have enough resource: {r}, requested: {requested}, used: {used}, capacity: {capacity}"
            return f"OutOf{r}", f"Pod was rejected: {message}"
    return None


def fit_error(n_nodes: int, *, prefilter: str = "", failures: dict[str, tuple[str, list[str]]]) -> str:
    """FitError.Error() with DefaultPreemption's PostFilter message (no victims ever found)."""
    msg = f"0/{n_nodes} nodes are available:"
    if prefilter:
        msg += f" {prefilter}."
        preempt = Counter({NO_VICTIMS: n_nodes})
    else:
        reasons: Counter[str] = Counter(r for _, rs in failures.values() for r in rs)
        if reasons:
            msg += " " + ", ".join(sorted(f"{v} {k}" for k, v in reasons.items())) + "."
        preempt = Counter(
            NOT_HELPFUL if code == UNRESOLVABLE else NO_VICTIMS for code, _ in failures.values()
        )
    histogram = ", ".join(sorted(f"{v} {k}" for k, v in preempt.items()))
    return msg + f" preemption: 0/{n_nodes} nodes are available: {histogram}.."
