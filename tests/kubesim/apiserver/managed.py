"""metadata.managedFields and server-side apply, after the apiserver's fieldmanager
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager) and structured-merge-diff.

A field set is a set of paths; a path is a tuple of fieldsV1 keys (`f:name`, `k:{"name":"x"}`,
`v:"value"`). Shapes (granular or atomic maps, associative/set/atomic lists) come from kubesim's
schema table (openapi_schema.py); anything it does not describe is a granular map or an atomic
list, as for a schemaless type.

- Update (create, update, patch): the manager gains every path whose value the request added or
  changed (defaulted values included), and every other manager loses them; no conflicts.
- Apply: the manager's set becomes exactly the applied configuration's fields (leaves, list
  items, atomic values). A field another manager owns whose value the configuration would change
  is a conflict: 409 `Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.k`,
  unless `force=true`, which takes the field over. Fields the applier owned alone and no longer
  applies are removed. The first apply to an object without managedFields gives its fields to
  `before-first-apply` (an Update entry).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.store import now_rfc3339
from .openapi_schema import Shape, kind_def, shape

Path = tuple[str, ...]
# never owned (the fieldmanager's stripped fields); status belongs to the status subresource
_META_IGNORED = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
}


def _root(res: Resource) -> Shape:
    d = kind_def(res.group, res.version, res.kind)
    return Shape("struct", definition=d) if d else Shape("open")


def _child(sh: Shape, key: str) -> Shape:
    if sh.kind == "struct" and sh.definition is not None:
        p = sh.definition.props.get(key)
        return shape(p.type, p.ann) if p else Shape("open")
    if sh.kind == "map":
        return shape(sh.elem)
    return Shape("open")


def _item_key(sh: Shape, item: Any) -> str:
    if sh.list_type == "set":
        return "v:" + json.dumps(item, separators=(",", ":"))
    keys = {k: item.get(k) for k in sh.keys if isinstance(item, dict) and k in item}
    return "k:" + json.dumps(dict(sorted(keys.items())), separators=(",", ":"))


def _atomic(sh: Shape) -> bool:
    return sh.atomic or sh.kind in ("scalar",) or (sh.kind == "list" and sh.list_type == "atomic")


def _by_value(sh: Shape, key: str) -> bool:
    """A struct field Go holds by value: present (as `{}`) even in a zero object, so never
    "added" as a node of its own while it has fields."""
    p = sh.definition.props.get(key) if sh.kind == "struct" and sh.definition else None
    return p is not None and "value" in p.ann


def _leaves(
    value: Any, sh: Shape, path: Path, out: set[Path], all_nodes: bool, by_value: bool = False
) -> None:
    """ToFieldSet: leaves, list items and atomic values (`all_nodes`: map and pointer-struct
    nodes too, as an Update's added subtree records them)."""
    if isinstance(value, dict) and not _atomic(sh) and sh.kind != "list":
        if (all_nodes and path and not (by_value and value)) or (path and not value):
            out.add(path)
        for k, v in value.items():
            _leaves(v, _child(sh, k), (*path, f"f:{k}"), out, all_nodes, _by_value(sh, k))
    elif isinstance(value, list) and sh.kind == "list" and sh.list_type != "atomic":
        if not value:
            out.add(path)  # an associative list's node is recorded only when it has no items
        elem = shape(sh.elem)
        for item in value:
            p = (*path, _item_key(sh, item))
            out.add(p)
            if sh.list_type == "map" and isinstance(item, dict):
                _leaves(item, elem, p, out, all_nodes)
    elif path:
        out.add(path)


def _strip(res: Resource, paths: set[Path], subresource: str) -> set[Path]:
    def kept(p: Path) -> bool:
        if p[0] in ("f:apiVersion", "f:kind"):
            return False
        if p[0] == "f:metadata" and len(p) > 1 and p[1][2:] in _META_IGNORED:
            return False
        if p == ("f:metadata",):
            return False
        is_status = p[0] == "f:status"
        return is_status if subresource == "status" else not (is_status and "status" in res.subresources)

    return {p for p in paths if kept(p)}


def field_set(res: Resource, obj: Any, *, all_nodes: bool = False, subresource: str = "") -> set[Path]:
    out: set[Path] = set()
    _leaves(obj, _root(res), (), out, all_nodes)
    return _strip(res, out, subresource)


def _changed(old: Any, new: Any, sh: Shape, path: Path, out: set[Path]) -> None:
    if old == new:
        return
    if old is None:
        _leaves(new, sh, path, out, True)
        return
    if old == {} and new == {}:
        return
    if isinstance(new, dict) and isinstance(old, dict) and not _atomic(sh) and sh.kind != "list":
        for k, v in new.items():
            child = _child(sh, k)
            if old.get(k) is None and _by_value(sh, k) and isinstance(v, dict):
                _changed({}, v, child, (*path, f"f:{k}"), out)  # present as {} in any object
            else:
                _changed(old.get(k), v, child, (*path, f"f:{k}"), out)
    elif isinstance(new, list) and isinstance(old, list) and sh.kind == "list" and sh.list_type != "atomic":
        elem = shape(sh.elem)
        before = {_item_key(sh, i): i for i in old}
        for item in new:
            k = _item_key(sh, item)
            if sh.list_type == "map" and k in before:
                _changed(before[k], item, elem, (*path, k), out)
            elif k not in before:
                _leaves(item, elem, (*path, k), out, True)
                out.add((*path, k))
    elif path:
        out.add(path)


# -- fieldsV1 encoding ---------------------------------------------------------
def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    members: set[Path] = set(paths)
    for p in paths:
        node = tree
        for part in p:
            node = node.setdefault(part, {})

    def render(node: dict[str, Any], path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node and path in members:
            out["."] = {}
        for k in sorted(node):
            out[k] = render(node[k], (*path, k))
        return out

    return render(tree, ())


def from_fields_v1(fields: dict[str, Any], path: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for k, v in (fields or {}).items():
        if k == ".":
            out.add(path)
        elif not v:
            out.add((*path, k))
        else:
            out |= from_fields_v1(v, (*path, k))
    return out


def path_text(p: Path) -> str:
    """structured-merge-diff's fieldpath.Path.String(): `.spec.containers[name="x"].image`."""
    out = ""
    for part in p:
        kind, body = part[:2], part[2:]
        if kind == "f:":
            out += "." + body
        elif kind == "k:":
            pairs = json.loads(body)
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in pairs.items()) + "]"
        else:
            out += "[=" + body + "]"
    return out


def _value_at(obj: Any, p: Path, res: Resource) -> Any:
    cur, sh = obj, _root(res)
    for part in p:
        if part.startswith("f:"):
            cur = cur.get(part[2:]) if isinstance(cur, dict) else None
            sh = _child(sh, part[2:])
        else:
            items = cur if isinstance(cur, list) else []
            cur = next((i for i in items if _item_key(sh, i) == part), None)
            sh = shape(sh.elem) if sh.kind == "list" else Shape("open")
        if cur is None:
            return None
    return cur


# -- entries -------------------------------------------------------------------
def _entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("managedFields") or [])


def _manager_id(e: dict[str, Any]) -> tuple[str, str, str]:
    return (e.get("manager", ""), e.get("operation", ""), e.get("subresource", ""))


def _store(obj: dict[str, Any], sets: list[tuple[dict[str, Any], set[Path]]]) -> None:
    out = []
    for entry, paths in sets:
        if not paths:
            continue
        e = {k: v for k, v in entry.items() if k not in ("fieldsType", "fieldsV1")}
        e["fieldsType"] = "FieldsV1"
        e["fieldsV1"] = to_fields_v1(paths)
        out.append(e)
    out.sort(key=lambda e: (e.get("time", ""), e.get("manager", "")))
    meta = obj.setdefault("metadata", {})
    if out:
        meta["managedFields"] = out
    else:
        meta.pop("managedFields", None)


def record_update(
    res: Resource, old: dict[str, Any] | None, new: dict[str, Any], manager: str, subresource: str = ""
) -> None:
    """An Update by `manager`: set new's managedFields from old's and what changed."""
    changed: set[Path] = set()
    _changed(old, new, _root(res), (), changed)
    changed = _strip(res, changed, subresource)
    live = field_set(res, new, all_nodes=True) | field_set(res, new, all_nodes=True, subresource="status")
    mine = {"manager": manager, "operation": "Update", "apiVersion": res.api_version}
    if subresource:
        mine["subresource"] = subresource
    sets: list[tuple[dict[str, Any], set[Path]]] = []
    found = False
    for e in _entries(old or {}):
        paths = from_fields_v1(e.get("fieldsV1") or {}) & live
        if _manager_id(e) == _manager_id(mine):
            found = True
            if changed:  # any field the operation changed, owned before or not, is "now"
                # (fieldmanager/internal/managedfieldsupdater.go: the current operation's fields)
                e = {**e, "time": now_rfc3339()}
            paths |= changed
        else:
            paths -= changed
        sets.append((e, paths))
    if not found:
        sets.append(({**mine, "time": now_rfc3339()}, changed))
    _store(new, sets)


def apply_merge(live: Any, config: Any, sh: Shape) -> Any:
    """The applied configuration merged into the live object (maps merge, associative lists merge
    by key, sets union, atomic values are replaced)."""
    if isinstance(config, dict) and isinstance(live, dict) and not _atomic(sh) and sh.kind != "list":
        out = copy.deepcopy(live)
        for k, v in config.items():
            out[k] = apply_merge(live.get(k), v, _child(sh, k))
        return out
    if isinstance(config, list) and isinstance(live, list) and sh.kind == "list" and sh.list_type != "atomic":
        elem = shape(sh.elem)
        out = copy.deepcopy(live)
        for item in config:
            k = _item_key(sh, item)
            i = next((n for n, x in enumerate(out) if _item_key(sh, x) == k), None)
            if i is None:
                out.append(copy.deepcopy(item))
            elif sh.list_type == "map":
                out[i] = apply_merge(out[i], item, elem)
        return out
    return copy.deepcopy(config)


def _remove(obj: Any, p: Path, res: Resource) -> None:
    parent = _value_at(obj, p[:-1], res) if len(p) > 1 else obj
    last = p[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        sh = _root(res)
        for part in p[:-1]:
            sh = _child(sh, part[2:]) if part.startswith("f:") else shape(sh.elem)
        parent[:] = [i for i in parent if _item_key(sh, i) != last]


def _manager_text(e: dict[str, Any]) -> str:
    out = json.dumps(e.get("manager", ""))
    if e.get("subresource"):
        out += f" with subresource {json.dumps(e['subresource'])}"
    return f"{out} using {e.get('apiVersion', '')}"


def server_side_apply(
    res: Resource, live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool
) -> dict[str, Any]:
    """The object an apply by `manager` makes of `live` (None: the apply creates it)."""
    applied = field_set(res, config)
    if live is None:
        out = copy.deepcopy(config)
        entry = {
            "manager": manager,
            "operation": "Apply",
            "apiVersion": res.api_version,
            "time": now_rfc3339(),
        }
        _store(out, [(entry, applied)])
        return out
    entries = _entries(live)
    if not entries:
        before = {"manager": "before-first-apply", "operation": "Update", "apiVersion": res.api_version}
        entries = [{**before, "time": now_rfc3339(), "fieldsV1": to_fields_v1(field_set(res, live))}]
    root = _root(res)
    merged = apply_merge(live, config, root)
    mine = (manager, "Apply", "")
    sets = [(e, from_fields_v1(e.get("fieldsV1") or {})) for e in entries]
    conflicts: list[tuple[dict[str, Any], Path]] = []
    for e, paths in sets:
        if _manager_id(e) == mine:
            continue
        for p in sorted(paths & applied):
            if _value_at(live, p, res) != _value_at(merged, p, res):
                conflicts.append((e, p))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    taken = {p for _, p in conflicts}
    previous = next((paths for e, paths in sets if _manager_id(e) == mine), set())
    others = set().union(*(paths for e, paths in sets if _manager_id(e) != mine)) - taken
    for p in sorted(previous - applied - others, key=len, reverse=True):
        _remove(merged, p, res)
    out_sets = []
    for e, paths in sets:
        if _manager_id(e) == mine:
            continue
        out_sets.append((e, paths - taken))
    changed = applied != previous or bool(taken)
    old_time = next((e.get("time") for e, _ in sets if _manager_id(e) == mine), None)
    entry = {"manager": manager, "operation": "Apply", "apiVersion": res.api_version}
    entry["time"] = now_rfc3339() if changed or old_time is None else old_time
    out_sets.append((entry, applied))
    _store(merged, out_sets)
    return merged


def _conflict_error(conflicts: list[tuple[dict[str, Any], Path]]) -> ApiError:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_manager_text(e)}",
            "field": path_text(p),
        }
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_manager_text(e)}: {path_text(p)}"
    else:
        by: dict[str, list[str]] = {}
        for e, p in conflicts:
            by.setdefault(_manager_text(e), []).append(path_text(p))
        lines = []
        for m in sorted(by):
            lines.append(f"conflicts with {m}:")
            lines.extend(f"- {p}" for p in by[m])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


def manager_name(query: dict[str, str] | Any, user_agent: str) -> str:
    """fieldManager, else the User-Agent's first segment (prefixFromUserAgent), 128 chars at most."""
    return (query.get("fieldManager") or user_agent.split("/")[0])[:128]
