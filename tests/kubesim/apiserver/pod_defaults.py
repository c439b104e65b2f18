"""The apiserver's defaulting of pod specs, as kubernetes/kubernetes pkg/apis/core/v1/defaults.go
(and the `+default` tags of its generated zz_generated.defaults.go) applies it to every Pod and pod
template written: what `kubectl get -o yaml` shows back and `kubectl describe pod` prints
(`80/TCP`, `timeout=1s period=10s #success=1 #failure=3`)."""

from __future__ import annotations

from typing import Any

from ..storage.resources import Resource
from ..storage.store import Obj

_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_VOLUME_SOURCES = ("configMap", "secret", "projected", "downwardAPI")


def default_pod_spec(spec: Obj, *, pod: bool = False) -> None:
    """SetDefaults_PodSpec, the containers' and volumes' defaults, and (a Pod, not a template)
    SetDefaults_Pod's enableServiceLinks and requests from limits."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(group) or []:
            if isinstance(c, dict):
                default_container(c, pod=pod and group != "ephemeralContainers")
    for v in spec.get("volumes") or []:
        if isinstance(v, dict):
            _default_volume(v)
    if pod:
        spec.setdefault("enableServiceLinks", True)
        if spec.get("hostNetwork"):  # defaultHostNetworkPorts
            for group in ("containers", "initContainers"):
                for c in spec.get(group) or []:
                    for p in c.get("ports") or []:
                        if not p.get("hostPort"):
                            p["hostPort"] = p.get("containerPort")


def default_container(c: Obj, *, pod: bool) -> None:
    """SetDefaults_Container, ContainerPort's protocol, probes, httpGet handlers and fieldRefs."""
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = (
            "Always" if image_tag(str(c.get("image") or "")) == "latest" else "IfNotPresent"
        )
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    resources = c.setdefault("resources", {})
    if pod and isinstance(resources, dict) and resources.get("limits"):
        requests = resources.setdefault("requests", {})
        for k, v in resources["limits"].items():
            requests.setdefault(k, v)
    for p in c.get("ports") or []:
        if isinstance(p, dict) and not p.get("protocol"):
            p["protocol"] = "TCP"
    for name in _PROBES:
        probe = c.get(name)
        if isinstance(probe, dict):
            for k, v in (
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ):
                if not probe.get(k):
                    probe[k] = v
            _default_http_get(probe.get("httpGet"))
    for hook in ((c.get("lifecycle") or {}).get("postStart"), (c.get("lifecycle") or {}).get("preStop")):
        if isinstance(hook, dict):
            _default_http_get(hook.get("httpGet"))
    for e in c.get("env") or []:
        field_ref = ((e or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"  # SetDefaults_ObjectFieldSelector


def image_tag(image: str) -> str:
    """parsers.ParseImageName's tag: `latest` when neither a tag nor a digest is given."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _default_http_get(action: Any) -> None:
    """SetDefaults_HTTPGetAction."""
    if isinstance(action, dict):
        if not action.get("path"):
            action["path"] = "/"
        if not action.get("scheme"):
            action["scheme"] = "HTTP"


def _default_volume(v: Obj) -> None:
    """SetDefaults_Volume (no source: an emptyDir) and the sources' defaultMode 0644 (420)."""
    if set(v) <= {"name"}:
        v["emptyDir"] = {}
    for source in _VOLUME_SOURCES:
        src = v.get(source)
        if isinstance(src, dict) and src.get("defaultMode") is None:
            src["defaultMode"] = 0o644


def admit(res: Resource, obj: Obj, old: Obj | None) -> None:
    """The Store's admission hook: every Pod written gets the defaults, controllers' pods too
    (their creates go through the apiserver on a real cluster); a new Pod also gets what the
    default admission plugins add."""
    if res.kind == "Pod" and isinstance(obj.get("spec"), dict):
        default_pod_spec(obj["spec"], pod=True)
        if old is None:
            admit_new_pod(obj["spec"])


# DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds/admission.go): 300 s
_TOLERATED_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def admit_new_pod(spec: Obj) -> None:
    """On create: Priority (plugin/pkg/admission/priority/admission.go; no PriorityClass is the
    global default, so priority 0, PreemptLowerPriority) and DefaultTolerationSeconds (a pod not
    tolerating a node's not-ready or unreachable NoExecute taint tolerates it for 300 s)."""
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    for key in _TOLERATED_TAINTS:
        if not any(
            isinstance(t, dict) and t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "")
            for t in tolerations
        ):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    spec["tolerations"] = tolerations
