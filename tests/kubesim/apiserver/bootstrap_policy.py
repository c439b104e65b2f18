"""The RBAC objects every apiserver bootstraps (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/policy.go ClusterRoles and ClusterRoleBindings; their testdata/cluster-roles.yaml
and cluster-role-bindings.yaml list them as served): the user-facing roles `cluster-admin`,
`admin`, `edit` and `view` (the last three aggregated from the `aggregate-to-*` roles, as the
clusterrole-aggregation controller fills them: controllers/clusterroles.py) and the `system:*`
roles and bindings of the built-in users and groups. Stored at boot with the
`kubernetes.io/bootstrapping: rbac-defaults` label and the autoupdate annotation, so
`kubectl get clusterroles` lists them and `kubectl create rolebinding --clusterrole=view` grants
what it does on a cluster.

Rules are written one a line: `verbs | apiGroups | resources [| resourceNames]` (`core` is the
"" group), or `verbs | url: paths` for nonResourceURLs; a role's header line may carry its
aggregation labels (`+view` for `rbac.authorization.k8s.io/aggregate-to-view: "true"`) and the
label its aggregationRule selects (`@admin`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage.resources import BY_PATH

if TYPE_CHECKING:
    from ..storage.store import Store

CLUSTER_ROLES = BY_PATH[("rbac.authorization.k8s.io", "clusterroles")]
CLUSTER_ROLE_BINDINGS = BY_PATH[("rbac.authorization.k8s.io", "clusterrolebindings")]
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
_RW = "create delete deletecollection patch update"
_RO = "get list watch"
_EVENTS = "create patch update | core events.k8s.io | events"

ROLES = f"""
admin @admin
cluster-admin
  * | * | *
  * | url: *
edit @edit +admin
system:aggregate-to-admin +admin
  create | authorization.k8s.io | localsubjectaccessreviews
  {_RW} get list watch | rbac.authorization.k8s.io | rolebindings roles
system:aggregate-to-edit +edit
  {_RO} | core | pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy
  impersonate | core | serviceaccounts
  {_RW} | core | pods pods/attach pods/exec pods/portforward pods/proxy
  create | core | pods/eviction
  {_RW} | core | configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy
  create | core | serviceaccounts/token
  {_RW} | apps | daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale
  {_RW} | autoscaling | horizontalpodautoscalers
  {_RW} | batch | cronjobs jobs
  {_RW} | extensions | daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale
  {_RW} | policy | poddisruptionbudgets
  {_RW} | networking.k8s.io | ingresses networkpolicies
  {_RW} get list watch | coordination.k8s.io | leases
system:aggregate-to-view +view
  {_RO} | core | configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status
  {_RO} | core | bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status
  {_RO} | core | namespaces
  {_RO} | discovery.k8s.io | endpointslices
  {_RO} | apps | controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status
  {_RO} | autoscaling | horizontalpodautoscalers horizontalpodautoscalers/status
  {_RO} | batch | cronjobs cronjobs/status jobs jobs/status
  {_RO} | extensions | daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale
  {_RO} | policy | poddisruptionbudgets poddisruptionbudgets/status
  {_RO} | networking.k8s.io | ingresses ingresses/status networkpolicies
system:auth-delegator
  create | authentication.k8s.io | tokenreviews
  create | authorization.k8s.io | subjectaccessreviews
system:basic-user
  create | authorization.k8s.io | selfsubjectaccessreviews selfsubjectrulesreviews
  create | authentication.k8s.io | selfsubjectreviews
system:certificates.k8s.io:certificatesigningrequests:nodeclient
  create | certificates.k8s.io | certificatesigningrequests/nodeclient
system:certificates.k8s.io:certificatesigningrequests:selfnodeclient
  create | certificates.k8s.io | certificatesigningrequests/selfnodeclient
system:certificates.k8s.io:kube-apiserver-client-approver
  approve | certificates.k8s.io | signers | kubernetes.io/kube-apiserver-client
system:certificates.k8s.io:kube-apiserver-client-kubelet-approver
  approve | certificates.k8s.io | signers | kubernetes.io/kube-apiserver-client-kubelet
system:certificates.k8s.io:kubelet-serving-approver
  approve | certificates.k8s.io | signers | kubernetes.io/kubelet-serving
system:certificates.k8s.io:legacy-unknown-approver
  approve | certificates.k8s.io | signers | kubernetes.io/legacy-unknown
system:discovery
  get | url: /api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/
system:heapster
  {_RO} | core | events namespaces nodes pods
  {_RO} | extensions | deployments
system:kube-aggregator
  {_RO} | core | endpoints services
system:kube-controller-manager
  {_EVENTS}
  create | coordination.k8s.io | leases
  get update | coordination.k8s.io | leases | kube-controller-manager
  create | core | secrets serviceaccounts
  delete | core | secrets
  get | core | configmaps namespaces secrets serviceaccounts
  update | core | secrets serviceaccounts
  create | authentication.k8s.io | tokenreviews
  create | authorization.k8s.io | subjectaccessreviews
  list watch | * | *
  create | core | serviceaccounts/token
system:kube-dns
  list watch | core | endpoints services
system:kube-scheduler
  {_EVENTS}
  create | coordination.k8s.io | leases
  get update | coordination.k8s.io | leases | kube-scheduler
  {_RO} | core | nodes
  delete get list watch | core | pods
  create | core | bindings pods/binding
  patch update | core | pods/status
  {_RO} | core | replicationcontrollers services
  {_RO} | apps extensions | replicasets
  {_RO} | apps | statefulsets
  {_RO} | policy | poddisruptionbudgets
  {_RO} | core | persistentvolumeclaims persistentvolumes
  create | authentication.k8s.io | tokenreviews
  create | authorization.k8s.io | subjectaccessreviews
  {_RO} | storage.k8s.io | csinodes
  {_RO} | core | namespaces
  {_RO} | storage.k8s.io | csidrivers
  {_RO} | storage.k8s.io | csistoragecapacities
system:kubelet-api-admin
  {_RO} | core | nodes
  proxy | core | nodes
  * | core | nodes/log nodes/metrics nodes/proxy nodes/stats
system:monitoring
  get | url: /healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*
system:node
  create | authentication.k8s.io | tokenreviews
  create | authorization.k8s.io | localsubjectaccessreviews subjectaccessreviews
  {_RO} | core | services
  create get list watch | core | nodes
  patch update | core | nodes/status
  patch update | core | nodes
  create patch update | core | events
  {_RO} | core | pods
  create delete | core | pods
  patch update | core | pods/status
  create | core | pods/eviction
  {_RO} | core | configmaps secrets
  get | core | persistentvolumeclaims persistentvolumes
  get | core | endpoints
  create get list watch | certificates.k8s.io | certificatesigningrequests
  create delete get patch update | coordination.k8s.io | leases
  get | storage.k8s.io | volumeattachments
  create | core | serviceaccounts/token
  get patch update | core | persistentvolumeclaims/status
  {_RO} | storage.k8s.io | csidrivers
  create delete get patch update | storage.k8s.io | csinodes
  {_RO} | node.k8s.io | runtimeclasses
system:node-bootstrapper
  create get list watch | certificates.k8s.io | certificatesigningrequests
system:node-problem-detector
  get | core | nodes
  patch | core | nodes/status
  {_EVENTS}
system:node-proxier
  list watch | core | endpoints services
  {_RO} | core | nodes
  {_EVENTS}
  list watch | discovery.k8s.io | endpointslices
system:persistent-volume-provisioner
  create delete get list watch | core | persistentvolumes
  get list update watch | core | persistentvolumeclaims
  {_RO} | storage.k8s.io | storageclasses
  watch | core | events
  {_EVENTS}
system:public-info-viewer
  get | url: /healthz /livez /readyz /version /version/
system:service-account-issuer-discovery
  get | url: /.well-known/openid-configuration /.well-known/openid-configuration/ /openid/v1/jwks /openid/v1/jwks/
system:volume-scheduler
  get list patch update watch | core | persistentvolumes
  {_RO} | storage.k8s.io | storageclasses
  get list patch update watch | core | persistentvolumeclaims
view @view +edit
"""

# (binding = role name, subjects as KIND:NAME, a ServiceAccount as ServiceAccount:NS/NAME)
BINDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cluster-admin", ("Group:system:masters",)),
    ("system:basic-user", ("Group:system:authenticated",)),
    ("system:discovery", ("Group:system:authenticated",)),
    ("system:kube-controller-manager", ("User:system:kube-controller-manager",)),
    ("system:kube-dns", ("ServiceAccount:kube-system/kube-dns",)),
    ("system:kube-scheduler", ("User:system:kube-scheduler",)),
    ("system:monitoring", ("Group:system:monitoring",)),
    ("system:node", ()),
    ("system:node-proxier", ("User:system:kube-proxy",)),
    ("system:public-info-viewer", ("Group:system:authenticated", "Group:system:unauthenticated")),
    ("system:service-account-issuer-discovery", ("Group:system:serviceaccounts",)),
    ("system:volume-scheduler", ("User:system:kube-scheduler",)),
)


def _rule(line: str) -> dict[str, list[str]]:
    parts = [p.strip() for p in line.split("|")]
    verbs = parts[0].split()
    if parts[1].startswith("url:"):
        return {"verbs": sorted(verbs), "nonResourceURLs": parts[1][4:].split()}
    groups = ["" if g == "core" else g for g in parts[1].split()]
    rule = {"verbs": sorted(verbs), "apiGroups": groups, "resources": parts[2].split()}
    if len(parts) > 3:
        rule["resourceNames"] = parts[3].split()
    return {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if k in rule}


def roles() -> list[dict[str, Any]]:
    """The bootstrap ClusterRoles as stored (aggregated roles with no rules yet)."""
    out: list[dict[str, Any]] = []
    for line in ROLES.strip("\n").splitlines():
        if not line.startswith(" "):
            name, *marks = line.split()
            labels = dict(BOOTSTRAPPING)
            role: dict[str, Any] = {
                "metadata": {"name": name, "labels": labels, "annotations": dict(AUTOUPDATE)}
            }
            for m in marks:
                if m.startswith("+"):
                    labels[AGGREGATE + m[1:]] = "true"
                elif m.startswith("@"):
                    role["aggregationRule"] = {
                        "clusterRoleSelectors": [{"matchLabels": {AGGREGATE + m[1:]: "true"}}]
                    }
            role["rules"] = []
            out.append(role)
        else:
            out[-1]["rules"].append(_rule(line))
    return out


def _subject(text: str) -> dict[str, str]:
    kind, _, name = text.partition(":")
    if kind == "ServiceAccount":
        ns, _, sa = name.partition("/")
        return {"kind": kind, "name": sa, "namespace": ns}
    return {"kind": kind, "apiGroup": "rbac.authorization.k8s.io", "name": name}


def install(store: Store) -> None:
    """Store the bootstrap roles and bindings (the aggregated roles' rules: clusterroles.py)."""
    for role in roles():
        store.create(CLUSTER_ROLES, "", role)
    for name, subjects in BINDINGS:
        binding: dict[str, Any] = {
            "metadata": {"name": name, "labels": dict(BOOTSTRAPPING), "annotations": dict(AUTOUPDATE)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        }
        if subjects:
            binding["subjects"] = [_subject(s) for s in subjects]
        store.create(CLUSTER_ROLE_BINDINGS, "", binding)
