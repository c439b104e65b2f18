"""metadata.managedFields and server-side apply, as the apiserver's field manager
(kubernetes/apimachinery pkg/util/managedfields/internal) drives structured-merge-diff
(kubernetes-sigs/structured-merge-diff merge/update.go; its typed values: fieldsets.py).

- Apply (Updater.Apply): the configuration merged into the live object; the applier's set
  becomes the configuration's fields; `prune` removes what it applied last time and no longer
  applies, unless another manager owns it or the new configuration still names it or something
  under it (`EnsureNamedFieldsAreMembers`): applying `data: {}` and then `data: {k: v}` keeps
  `k`. The conflicts (Updater.update) are the fields another manager owns that the apply
  modifies or adds: equal values are no conflict (both managers then own the field), a list
  item is never one (only its fields change); `force` takes them over; a removed field leaves
  every manager. 409 with one cause per field (merge/conflict.go, internal/conflict.go: grouped
  by manager, an applier named `"kubectl"`, an updater `"kubectl-create" using apps/v1`).
- Update (create, update, patch; managedfieldsupdater.go): the operation owns what it added or
  changed, merged into its manager's entry, whose time moves; other managers lose it.
- stripmeta.go (name, uid, ... never owned), skipnonapplied.go (an apply to an object without
  managedFields first records them as `before-first-apply`), capmanagers.go (at most 10 Update
  entries, the oldest folded into `ancient-changes`), managedfields.go (entries sorted by
  operation, time, manager). Objects kubesim's controllers write without managedFields are
  tracked from their first update on (on a cluster every object has them).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.store import now_rfc3339
from .fieldsets import (
    Comparison,
    Path,
    Paths,
    compare,
    drop_nulls,
    ensure_named,
    field_set,
    from_fields_v1,
    merge,
    ordered,
    path_text,
    remove,
    root,
    to_fields_v1,
    to_set,
    zero,
)
from .openapi_schema import Shape

# stripmeta.go: fields no manager owns
_STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", "f:" + k)
    for k in (
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    )
}
MAX_UPDATE_MANAGERS = 10

# -- managers --------------------------------------------------------------------------------
Manager = tuple[str, str, str, str]  # (manager, operation, apiVersion, subresource)


def _manager_of(e: dict[str, Any]) -> Manager:
    """BuildManagerIdentifier: an applier's identity has no apiVersion."""
    op = e.get("operation", "")
    return (e.get("manager", ""), op, "" if op == "Apply" else e.get("apiVersion", ""), e.get("subresource", ""))


class _Managed:
    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.sets: dict[Manager, Paths] = {}
        self.info: dict[Manager, dict[str, Any]] = {}
        for e in entries:
            if not isinstance(e, dict):
                continue
            m = _manager_of(e)
            self.sets[m] = from_fields_v1(e.get("fieldsV1") or {})
            self.info[m] = {k: v for k, v in e.items() if k not in ("fieldsV1", "fieldsType")}

    def encode(self, obj: dict[str, Any]) -> None:
        """EncodeObjectManagedFields, sorted as sortEncodedManagedFields sorts them."""
        out = []
        for m, paths in self.sets.items():
            if not paths:
                continue
            e = dict(self.info.get(m) or {})
            e.update({"manager": m[0], "operation": m[1], "apiVersion": e.get("apiVersion") or m[2]})
            if m[3]:
                e["subresource"] = m[3]
            e.setdefault("time", now_rfc3339())
            e["fieldsType"] = "FieldsV1"
            e["fieldsV1"] = to_fields_v1(paths)
            out.append(e)
        order = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")
        out = [{k: e[k] for k in order if k in e} for e in out]
        out.sort(key=lambda e: (e["operation"], e.get("time", ""), e["manager"], e["apiVersion"], e.get("subresource", "")))
        meta = obj.setdefault("metadata", {})
        if out:
            meta["managedFields"] = out
        else:
            meta.pop("managedFields", None)

    def cap(self, res: Resource) -> None:
        """capManagersManager: the oldest Update entries folded into `ancient-changes`."""
        updaters = [m for m in self.sets if m[1] == "Update"]
        if len(updaters) <= MAX_UPDATE_MANAGERS:
            return
        updaters.sort(key=lambda m: (self.info.get(m, {}).get("time", ""), m))
        bucket: Manager = ("ancient-changes", "Update", res.api_version, "")
        first: Manager | None = None
        length = len(updaters)
        for m in updaters:
            if length <= MAX_UPDATE_MANAGERS:
                break
            if first is None:
                first = m
                continue
            if bucket not in self.sets:
                self.sets[bucket] = self.sets.pop(first)
                self.info[bucket] = {"apiVersion": res.api_version}
            self.sets[bucket] |= self.sets.pop(m)
            self.info[bucket]["time"] = self.info.pop(m, {}).get("time", now_rfc3339())
            length -= 1


def _ignored(res: Resource, subresource: str, paths: Paths) -> Paths:
    """The strategy's reset fields: the main resource never owns status (when it has a status
    subresource), the status subresource owns nothing else; stripmeta.go's fields are no one's."""

    def kept(p: Path) -> bool:
        if p in _STRIPPED or not p:
            return False
        is_status = p[0] == "f:status"
        return is_status if subresource == "status" else not (is_status and "status" in res.subresources)

    return {p for p in paths if kept(p)}


def _without_managed(obj: Any) -> Any:
    out = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    out.get("metadata", {}).pop("managedFields", None)
    return out


def _update(
    res: Resource, old: Any, new: Any, managed: _Managed, me: Manager, force: bool, subresource: str
) -> Comparison:
    """Updater.update: compare, the conflicts with every other manager, removed fields dropped."""
    c = Comparison()
    compare(old, new, root(res), (), c)
    c.added = _ignored(res, subresource, c.added)
    c.modified = _ignored(res, subresource, c.modified)
    c.removed = _ignored(res, subresource, c.removed)
    conflicts = {m: s & (c.modified | c.added) for m, s in managed.sets.items() if m != me}
    conflicts = {m: s for m, s in conflicts.items() if s}
    if conflicts and not force:
        raise _conflict_error(managed, conflicts)
    for m, s in conflicts.items():
        managed.sets[m] = managed.sets[m] - s
    for m in list(managed.sets):
        if m != me:
            managed.sets[m] = managed.sets[m] - c.removed
            if not managed.sets[m]:
                del managed.sets[m]
                managed.info.pop(m, None)
    return c


def record_update(
    res: Resource, old: dict[str, Any] | None, new: dict[str, Any], manager: str, subresource: str = ""
) -> None:
    """An Update by `manager` (create, update, patch): set new's managedFields. The operation
    owns what it added or changed, merged into its manager's entry, whose time moves."""
    live_entries = (old or {}).get("metadata", {}).get("managedFields") or []
    new_entries = new.get("metadata", {}).get("managedFields") or []
    # decodeLiveOrNew: a client may set managedFields itself, except through a subresource
    managed = _Managed(live_entries if subresource or not new_entries else new_entries)
    before = zero(root(res)) if old is None else _without_managed(old)
    me: Manager = (manager, "Update", res.api_version, subresource)
    c = _update(res, before, _without_managed(new), managed, ("current-operation", "", "", ""), True, subresource)
    mine = c.modified | c.added
    if mine:
        managed.sets[me] = managed.sets.get(me, set()) | mine
        managed.info[me] = {**managed.info.get(me, {}), "apiVersion": res.api_version, "time": now_rfc3339()}
    managed.cap(res)
    managed.encode(new)


def server_side_apply(
    res: Resource, live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool
) -> dict[str, Any]:
    """The object an apply by `manager` makes of `live` (None: the apply creates it)."""
    top = root(res)
    if (config.get("metadata") or {}).get("managedFields") is not None:
        raise ApiError.bad_request("metadata.managedFields must be nil")
    base = zero(top) if live is None else _without_managed(live)
    managed = _Managed(((live or {}).get("metadata") or {}).get("managedFields") or [])
    if live is not None and not managed.sets:
        # skipNonAppliedManager.Apply: what the object has is first owned by before-first-apply
        first: Manager = ("before-first-apply", "Update", res.api_version, "")
        c = _update(res, zero(top), base, managed, ("current-operation", "", "", ""), True, "")
        if c.modified | c.added:
            managed.sets[first] = c.modified | c.added
            managed.info[first] = {"apiVersion": res.api_version, "time": now_rfc3339()}
    me: Manager = (manager, "Apply", "", "")
    merged = merge(base, config, top)
    last = managed.sets.get(me)
    managed.sets[me] = _ignored(res, "", field_set(res, config))
    if last:
        merged = _prune(merged, managed, last, top)
    _update(res, base, merged, managed, me, force, "")
    out = drop_nulls(merged)
    if out != base or me not in managed.info:
        managed.info[me] = {"apiVersion": res.api_version, "time": now_rfc3339()}
    else:
        managed.info[me] = {**managed.info[me], "apiVersion": res.api_version}
    managed.encode(out)
    return out


def _prune(merged: Any, managed: _Managed, last: Paths, top: Shape) -> Any:
    """Updater.prune: remove what the applier applied last time and no longer applies, unless
    another manager (or the new configuration) claims it or something under it."""

    def members(obj: Any) -> Paths:
        out: Paths = set()
        to_set(obj, top, (), out)
        return ensure_named(out, top)

    pruned = remove(merged, ensure_named(last, top), top) or {}
    owned = ensure_named(set().union(*managed.sets.values()), top)
    merged_set = members(merged)
    pruned = remove(merged, merged_set - (members(pruned) | owned), top) or {}
    return remove(merged, (merged_set - members(pruned)) & ensure_named(last, top), top) or {}


def _manager_text(m: Manager, info: dict[str, Any]) -> str:
    """printManager: an applier by name, an updater with its apiVersion."""
    out = json.dumps(m[0])
    if m[3]:
        out += f" with subresource {json.dumps(m[3])}"
    if m[1] == "Update":
        out += f" using {info.get('apiVersion') or m[2]}"
    return out


def _conflict_error(managed: _Managed, conflicts: dict[Manager, Paths]) -> ApiError:
    items = [(m, p) for m in sorted(conflicts) for p in ordered(conflicts[m])]
    texts = {m: _manager_text(m, managed.info.get(m, {})) for m in conflicts}
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {texts[m]}", "field": path_text(p)}
        for m, p in items
    ]
    if len(items) == 1:
        m, p = items[0]
        message = f"Apply failed with 1 conflict: conflict with {texts[m]}: {path_text(p)}"
    else:
        lines = []
        for m in sorted(conflicts):
            lines.append(f"conflicts with {texts[m]}:")
            lines.extend(f"- {path_text(p)}" for p in ordered(conflicts[m]))
        message = f"Apply failed with {len(items)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


def manager_name(query: dict[str, str] | Any, user_agent: str) -> str:
    """fieldManager, else the User-Agent's first segment (prefixFromUserAgent), 128 chars at most."""
    return (query.get("fieldManager") or user_agent.split("/")[0])[:128]
