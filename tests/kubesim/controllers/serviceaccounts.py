"""What every namespace holds from the moment it exists, so its pods can talk to the API server:

- the `default` ServiceAccount (kubernetes/kubernetes pkg/controller/serviceaccount/
  serviceaccounts_controller.go: on a namespace added or updated, and when the account is deleted);
- the `kube-root-ca.crt` ConfigMap with the API server's CA as `ca.crt` and the description
  annotation (pkg/controller/certificates/rootcacertpublisher/publisher.go: on a namespace added,
  and when the ConfigMap is deleted or changed, its data and annotation are put back).

Both run as a store hook, synchronously: a pod created right after its namespace finds its
`default` ServiceAccount (the real admission plugin waits up to ~2 s for the controller)."""

from __future__ import annotations

from collections.abc import Callable

from ..storage.resources import BY_PATH
from ..storage.store import Event, Obj, Store

NAMESPACES = BY_PATH[("", "namespaces")]
SERVICEACCOUNTS = BY_PATH[("", "serviceaccounts")]
CONFIGMAPS = BY_PATH[("", "configmaps")]
DEFAULT = "default"
ROOT_CA = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


class NamespaceDefaults:
    """The ServiceAccounts controller and the root CA publisher, as one store hook."""

    def __init__(self, store: Store, root_ca: Callable[[], str | None]) -> None:
        self.store = store
        self.root_ca = root_ca  # the CA bundle (PEM), once the API server has one
        store.hooks.append(self._on_event)

    def _on_event(self, ev: Event) -> None:
        kind, name = ev.res.kind, ev.obj["metadata"]["name"]
        if kind == "Namespace" and ev.type != "DELETED":
            if (ev.obj.get("status") or {}).get("phase", "Active") == "Active":
                self.sync(name)
        elif (kind == "ServiceAccount" and ev.type == "DELETED" and name == DEFAULT) or (
            kind == "ConfigMap" and ev.type != "ADDED" and name == ROOT_CA
        ):
            self.sync(ev.namespace)

    def sync(self, namespace: str) -> None:
        ns = self.store.find(NAMESPACES, "", namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return  # gone or terminating: nothing is created there any more
        if self.store.find(SERVICEACCOUNTS, namespace, DEFAULT) is None:
            self.store.create(SERVICEACCOUNTS, namespace, {"metadata": {"name": DEFAULT}})
        ca = self.root_ca()
        if ca is None:
            return
        data = {"ca.crt": ca}
        cm = self.store.find(CONFIGMAPS, namespace, ROOT_CA)
        if cm is None:
            body: Obj = {
                "metadata": {"name": ROOT_CA, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                "data": data,
            }
            self.store.create(CONFIGMAPS, namespace, body)
        elif cm.get("data") != data or not (cm["metadata"].get("annotations") or {}).get(
            DESCRIPTION_ANNOTATION
        ):

            def restore(o: Obj) -> None:
                o["data"] = data
                o["metadata"].setdefault("annotations", {})[DESCRIPTION_ANNOTATION] = DESCRIPTION

            self.store.mutate(CONFIGMAPS, namespace, ROOT_CA, restore)
