"""The resource kinds kubesim serves, and the discovery documents that describe them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    singular: str = ""
    verbs: tuple[str, ...] = ()  # the discovery document's verbs; empty: VERBS
    # older versions also served, converted at the HTTP boundary (apiserver/versions.py)
    also: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """Name used in error messages: `pods`, `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "Namespace", False, ("ns",), ("status",)),
    Resource("", "v1", "nodes", "Node", False, ("no",), ("status",)),
    Resource(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        ("po",),
        ("attach", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "proxy", "status"),
    ),
    Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    Resource("", "v1", "secrets", "Secret", True),
    Resource("", "v1", "services", "Service", True, ("svc",), ("proxy", "status")),
    Resource("", "v1", "endpoints", "Endpoints", True, ("ep",), singular="endpoints"),
    Resource("", "v1", "events", "Event", True, ("ev",)),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), ("token",)),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), ("status",)),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), ("status",)),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), ("scale", "status")),
    Resource("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), ("status",)),
    Resource("", "v1", "limitranges", "LimitRange", True, ("limits",)),
    Resource("apps", "v1", "deployments", "Deployment", True, ("deploy",), ("status", "scale")),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), ("status",)),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), ("status", "scale")),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), ("status",)),
    Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    Resource("batch", "v1", "jobs", "Job", True, (), ("status",)),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("status",)),
    Resource(
        "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), ("status",),
        also=("v1",),
    ),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), ("status",)),
    Resource("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), ("status",)),
    Resource("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    Resource("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, (), ("status",)),
    Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
        ("status",),
    ),
)

# Kinds in the `all` category (`kubectl get all`), as the apiserver's discovery lists them.
CATEGORY_ALL = {
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "cronjobs"),
    ("", "services"),  # the "all" category as the apiserver lists it (services are in it)
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
}

BY_PATH: dict[tuple[str, str], Resource] = {(r.group, r.plural): r for r in RESOURCES}
BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}

# Create-only kinds with no storage, answered about the requesting user (apiserver/reviews.py).
# Kept out of RESOURCES: nothing lists, watches or stores them.
REVIEWS: tuple[Resource, ...] = (
    Resource(
        "authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",)
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        verbs=("create",),
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        False,
        verbs=("create",),
    ),
)
REVIEWS_BY_PATH: dict[tuple[str, str], Resource] = {(r.group, r.plural): r for r in REVIEWS}
ACCESS_REVIEWS_GROUP = "authorization.k8s.io"


# subresources of another group's kind name it, as the apiserver's discovery does
_SUB_GROUP_VERSION = {
    "token": {"group": "authentication.k8s.io", "version": "v1"},
    "eviction": {"group": "policy", "version": "v1"},
    "scale": {"group": "autoscaling", "version": "v1"},
}


def served(reviews: bool = True) -> tuple[Resource, ...]:
    """Every kind discovery lists; without `reviews`, as a server without authorization.k8s.io."""
    return RESOURCES + tuple(r for r in REVIEWS if reviews or r.group != ACCESS_REVIEWS_GROUP)


def group_versions(reviews: bool = True) -> dict[str, list[str]]:
    """Each group's versions, the preferred (stored) one first."""
    out: dict[str, list[str]] = {}
    for r in served(reviews):
        versions = out.setdefault(r.group, [])
        for v in (r.version, *r.also):
            if v not in versions:
                versions.append(v)
    return out


def serves(r: Resource, version: str) -> bool:
    return version == r.version or version in r.also


def resource_list(group: str, version: str, reviews: bool = True) -> dict[str, object]:
    items: list[dict[str, object]] = []
    for r in served(reviews):
        if r.group != group or not serves(r, version):
            continue
        items.append(
            {
                "name": r.plural,
                "singularName": r.singular or r.kind.lower(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(r.verbs) or VERBS,
                **({"shortNames": list(r.short)} if r.short else {}),
                **({"categories": ["all"]} if (r.group, r.plural) in CATEGORY_ALL else {}),
            }
        )
        for sub in r.subresources:
            verbs = {
                "token": ["create"],
                "eviction": ["create"],
                "attach": ["create", "get"],
                "exec": ["create", "get"],
                "ephemeralcontainers": ["get", "patch", "update"],
                "portforward": ["create", "get"],
                "log": ["get"],
                "proxy": ["create", "delete", "get", "patch", "update"],
                "status": ["get", "patch", "update"],
                "scale": ["get", "patch", "update"],
            }[sub]
            kind = {
                "token": "TokenRequest",
                "eviction": "Eviction",
                "attach": "PodAttachOptions",
                "exec": "PodExecOptions",
                "portforward": "PodPortForwardOptions",
                "log": "Pod",
                "scale": "Scale",
                "proxy": f"{r.kind}ProxyOptions",
            }.get(sub, r.kind)
            items.append(
                {
                    "name": f"{r.plural}/{sub}",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": kind,
                    "verbs": verbs,
                    **(_SUB_GROUP_VERSION.get(sub) or {}),
                }
            )
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": items,
    }


def api_group_list(reviews: bool = True) -> dict[str, object]:
    groups = []
    for group, versions in group_versions(reviews).items():
        if not group:
            continue
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        groups.append({"name": group, "versions": gvs, "preferredVersion": gvs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
