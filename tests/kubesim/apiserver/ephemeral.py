"""`pods/ephemeralcontainers`: the only way to add a container to a running pod (`kubectl debug`).

As the apiserver's podEphemeralContainersStrategy (pkg/registry/core/pod/strategy.go): a GET
returns the Pod; a PATCH or PUT keeps everything of the stored pod but `spec.ephemeralContainers`
(dropNonEphemeralContainerUpdates), which is then validated as
pkg/apis/core/validation/validation.go validateEphemeralContainers and
ValidatePodEphemeralContainersUpdate do: names unique across every container of the pod, a
`targetContainerName` that names a container or init container, only the allow-listed fields
(no ports, probes, lifecycle, resources), no subPath mounts, and existing ephemeral containers
never changed nor removed. Pod Security admission then judges the resulting pod (podsecurity.py)."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .dryrun import dry_run
from .fieldvalidation import with_warnings
from .patch import apply_patch
from .podsecurity import enforce
from .responses import json_response

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
NAMESPACES = BY_PATH[("", "namespaces")]

# validation.go allowedEphemeralContainerFields (the EphemeralContainerCommon fields allowed set)
ALLOWED = {
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "volumeMounts",
    "volumeDevices",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    "targetContainerName",
}
# the rest of EphemeralContainerCommon, in the Go struct's order: set, each is Forbidden
FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)


def _empty(v: Any) -> bool:
    """Go's zero value: a field the client sent as `{}`/`[]`/null counts as not set."""
    return v is None or v == {} or v == [] or v == "" or v is False


def default_ephemeral(ec: Obj) -> None:
    """SetDefaults_EphemeralContainer (as for any container): pull policy and termination message."""
    image = str(ec.get("image", ""))
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    ec.setdefault(
        "imagePullPolicy", "Always" if ":" not in last or last.endswith(":latest") else "IfNotPresent"
    )
    ec.setdefault("terminationMessagePath", "/dev/termination-log")
    ec.setdefault("terminationMessagePolicy", "File")


def _causes(errors: list[tuple[str, str, str]]) -> list[Obj]:
    return [{"reason": r, "message": m, "field": f} for f, r, m in errors]


def validate_update(old: Obj, new: Obj) -> None:
    """ValidatePodEphemeralContainersUpdate: every problem at once, one 422 Invalid."""
    name = old["metadata"]["name"]
    errors: list[tuple[str, str, str]] = []  # (field, reason, message)
    if "kubernetes.io/config.mirror" in (old["metadata"].get("annotations") or {}):
        raise ApiError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: Forbidden: static pods do not support ephemeral containers',
            {"name": name, "kind": "Pod"},
        )
    spec = new["spec"]
    others = [c["name"] for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])]
    every = set(others)
    volumes = {v.get("name") for v in spec.get("volumes") or []}
    for i, ec in enumerate(spec.get("ephemeralContainers") or []):
        path = f"spec.ephemeralContainers[{i}]"
        if not isinstance(ec, dict):
            errors.append((path, "FieldValueInvalid", "Invalid value: must be an object"))
            continue
        ecname = ec.get("name") or ""
        if not ecname:
            errors.append((f"{path}.name", "FieldValueRequired", "Required value"))
        elif ecname in every:
            errors.append((f"{path}.name", "FieldValueDuplicate", f'Duplicate value: "{ecname}"'))
        else:
            every.add(ecname)
        if not ec.get("image"):
            errors.append((f"{path}.image", "FieldValueRequired", "Required value"))
        target = ec.get("targetContainerName") or ""
        if target and target not in others:
            errors.append((f"{path}.targetContainerName", "FieldValueNotFound", f'Not found: "{target}"'))
        for fld in FORBIDDEN:
            if not _empty(ec.get(fld)):
                errors.append(
                    (
                        f"{path}.{fld}",
                        "FieldValueForbidden",
                        "Forbidden: cannot be set for an Ephemeral Container",
                    )
                )
        for j, vm in enumerate(ec.get("volumeMounts") or []):
            vpath = f"{path}.volumeMounts[{j}]"
            if vm.get("name") not in volumes:
                errors.append((f"{vpath}.name", "FieldValueNotFound", f'Not found: "{vm.get("name")}"'))
            for sub in ("subPath", "subPathExpr"):
                if vm.get(sub):
                    errors.append(
                        (
                            f"{vpath}.{sub}",
                            "FieldValueForbidden",
                            "Forbidden: cannot be set for an Ephemeral Container",
                        )
                    )
    # Part 2: existing ephemeral containers may not be changed or removed (order is not kept by a
    # patch, so each is found by name)
    by_name = {ec.get("name"): ec for ec in spec.get("ephemeralContainers") or [] if isinstance(ec, dict)}
    for prev in old["spec"].get("ephemeralContainers") or []:
        now = by_name.get(prev["name"])
        if now is None:
            msg = f'Forbidden: existing ephemeral containers "{prev["name"]}" may not be removed\n'
            errors.append(("spec.ephemeralContainers", "FieldValueForbidden", msg))
        elif now != prev:
            msg = f'Forbidden: existing ephemeral containers "{prev["name"]}" may not be changed\n'
            errors.append(("spec.ephemeralContainers", "FieldValueForbidden", msg))
    if errors:
        joined = ", ".join(f"{f}: {m}" for f, _, m in errors)
        if len(errors) > 1:
            joined = f"[{joined}]"
        raise ApiError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: {joined}',
            {"name": name, "kind": "Pod", "causes": _causes(errors)},
        )


def updated_pod(cur: Obj, sent: Obj) -> Obj:
    """dropNonEphemeralContainerUpdates: the stored pod with only the sent ephemeralContainers."""
    new = copy.deepcopy(cur)
    ecs = copy.deepcopy((sent.get("spec") or {}).get("ephemeralContainers") or [])
    for ec in ecs:
        if isinstance(ec, dict):
            default_ephemeral(ec)
    # the stored, defaulted form of the old ones is compared as stored
    olds = {e["name"]: e for e in cur["spec"].get("ephemeralContainers") or []}
    for i, ec in enumerate(ecs):
        if isinstance(ec, dict) and ec.get("name") in olds:
            prev = olds[ec["name"]]
            if {k: v for k, v in ec.items() if not _empty(v)} == {
                k: v for k, v in prev.items() if not _empty(v)
            }:
                ecs[i] = copy.deepcopy(prev)
    if ecs:
        new["spec"]["ephemeralContainers"] = ecs
    else:
        new["spec"].pop("ephemeralContainers", None)
    want_rv = (sent.get("metadata") or {}).get("resourceVersion")
    if want_rv:
        new["metadata"]["resourceVersion"] = str(want_rv)
    return new


async def handle_ephemeral(request: web.Request, cluster: Cluster, ns: str, name: str) -> web.StreamResponse:
    store = cluster.store
    cur = store.get(PODS, ns, name)
    if request.method == "GET":
        return json_response(cur)
    if request.method not in ("PATCH", "PUT"):
        raise ApiError(
            405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
        )
    raw = await request.read()
    if request.method == "PUT":
        try:
            sent = json.loads(raw or b"{}")
        except ValueError as e:
            raise ApiError.bad_request(f"error decoding request body: {e}") from None
        if not isinstance(sent, dict):
            raise ApiError.bad_request("the body of the request was in an unknown format")
    else:
        sent = apply_patch(copy.deepcopy(cur), raw, request.headers.get("Content-Type", ""))
    new = updated_pod(cur, sent)
    validate_update(cur, new)
    namespace = store.find(NAMESPACES, "", ns)
    warnings = enforce(namespace, new, name=name)
    if dry_run(request):
        return with_warnings(json_response(new), warnings)
    out = store.update(PODS, ns, new)
    return with_warnings(json_response(out), warnings)
