"""Server-side dry run: `dryRun=All` on every write, the request's options as the apiserver reads
them (a DELETE's from its DeleteOptions body as well as the query, as kubectl sends them).

Every handler in kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers
(create.go, update.go, patch.go, delete.go) validates the options first
(apimachinery pkg/apis/meta/v1/validation `ValidateDryRun`: only "All", else a 422 on the
options kind) and then runs admission and validation as for a real write, the registry skipping
only the storage write (pkg/registry/generic/registry/dryrun.go): a dry-run delete answers with
what a delete would (a pod marked for graceful deletion, a deleted object) and changes nothing,
and a dry-run scale answers with the new count while the stored object keeps its own."""

from __future__ import annotations

import copy
import json
from typing import Any

from aiohttp import web

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.store import Obj, Store

OPTIONS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def dry_run(request: web.Request, options: dict[str, Any] | None = None) -> bool:
    """Whether the request is a dry run; a 422 for a value other than All (ValidateDryRun)."""
    values = list(request.query.getall("dryRun", []))
    if options and isinstance(options.get("dryRun"), list):
        values += [str(v) for v in options["dryRun"]]
    values = [v for v in values if v != ""]
    bad = [v for v in values if v != "All"]
    if bad:
        kind = OPTIONS.get(request.method, "CreateOptions")
        shown = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"
        cause = f'Unsupported value: {shown}: supported values: "All"'
        raise ApiError(
            422,
            "Invalid",
            f'{kind}.meta.k8s.io "" is invalid: dryRun: {cause}',
            {
                "group": "meta.k8s.io",
                "kind": kind,
                "causes": [{"reason": "FieldValueNotSupported", "message": cause, "field": "dryRun"}],
            },
        )
    return bool(values)


async def delete_options(request: web.Request) -> dict[str, Any]:
    """A DELETE's DeleteOptions: its body (kubectl sends them so), else none."""
    raw = await request.read()
    try:
        opts = json.loads(raw) if raw else {}
    except ValueError:
        opts = {}
    return opts if isinstance(opts, dict) else {}


def dry_update(store: Store, res: Resource, cur: Obj, new: Obj, sub: str) -> Obj:
    """What an update would store, validated and admitted as one, stored nowhere."""
    if sub != "status":
        store.admit(res, new, cur)
    out = copy.deepcopy(new)
    out["metadata"]["resourceVersion"] = cur["metadata"].get("resourceVersion", "")
    return out
