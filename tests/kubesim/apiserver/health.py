"""/healthz, /livez and /readyz as the apiserver serves them (k8s.io/apiserver pkg/server/healthz/
healthz.go handleRootHealth): `ok`, or with `?verbose` one `[+]NAME ok` line per check and
`readyz check passed`; `?exclude=NAME` shows `[+]NAME excluded: ok`; `/readyz/NAME` is one
check (`ok`), an unknown one 404. The checks are a kind cluster's kube-apiserver's (1.32): ping,
log, etcd, the post-start hooks, and for readyz also etcd-readiness, informer-sync and shutdown."""

from __future__ import annotations

from aiohttp import web

from .responses import flag

_HOOKS = (
    "start-apiserver-admission-initializer",
    "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer",
    "priority-and-fairness-filter",
    "storage-object-count-tracker-hook",
    "start-apiextensions-informers",
    "start-apiextensions-controllers",
    "crd-informer-synced",
    "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "bootstrap-controller",
    "aggregator-reload-proxy-client-cert",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
)


def checks(endpoint: str) -> list[str]:
    """The named checks of /healthz, /livez or /readyz, in the order they are printed."""
    hooks = [f"poststarthook/{h}" for h in _HOOKS]
    tail = [
        "autoregister-completion",
        "poststarthook/apiservice-openapi-controller",
        "poststarthook/apiservice-openapiv3-controller",
    ]
    if endpoint == "readyz":
        return ["ping", "log", "etcd", "etcd-readiness", "informer-sync", *hooks, *tail, "shutdown"]
    return ["ping", "log", "etcd", *hooks, *tail]


def is_health(path: str) -> bool:
    return path.split("/")[1:2] in (["healthz"], ["livez"], ["readyz"])


def response(request: web.Request) -> web.Response:
    parts = request.path.strip("/").split("/", 1)
    endpoint = parts[0]
    names = checks(endpoint)
    headers = {"X-Content-Type-Options": "nosniff"}
    if len(parts) > 1:  # one check: /readyz/etcd, /livez/poststarthook/rbac/bootstrap-roles
        if parts[1] not in names:
            return web.Response(status=404, text="404 page not found\n", headers=headers)
        return web.Response(text="ok", headers=headers)
    if "verbose" not in request.query or not flag(request.query.get("verbose") or "true"):
        return web.Response(text="ok", headers=headers)
    excluded = set(request.query.getall("exclude", []))
    lines = [f"[+]{n} excluded: ok" if n in excluded else f"[+]{n} ok" for n in names]
    return web.Response(text="\n".join(lines) + f"\n{endpoint} check passed\n", headers=headers)
