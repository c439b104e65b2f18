"""pods/log, and the container a pods/log or pods/exec request means."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .responses import flag

if TYPE_CHECKING:
    from ..cluster import Cluster


def pick_container(pod: Obj, requested: str) -> str:
    """The container a pods/log or pods/exec request means, with the apiserver's 400 texts."""
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in pod["spec"].get("containers") or []]
    if not requested:
        if len(containers) != 1:
            raise ApiError.bad_request(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
            )
        return str(containers[0])
    if requested not in containers:
        raise ApiError.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def log_response(request: web.Request, cluster: Cluster, ns: str, name: str) -> web.Response:
    pod = cluster.store.get(BY_PATH[("", "pods")], ns, name)
    container = pick_container(pod, request.query.get("container", ""))
    text = cluster.container_log(ns, name, container, previous=flag(request.query.get("previous")))
    if text is None:
        raise ApiError.bad_request(
            f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
        )
    tail = request.query.get("tailLines")
    if tail is not None:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-int(tail) :]) if int(tail) > 0 else ""
    return web.Response(text=text, content_type="text/plain")
