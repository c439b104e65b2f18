"""Typed values and field sets, ported from kubernetes-sigs/structured-merge-diff (SMD) for
managed.py: what an object's fields are, how an applied configuration merges into it, what two
objects differ in, and how items are removed, on JSON values whose shapes come from kubesim's
schema table (openapi_schema.py); a type the table does not describe (`object`) is taken as a
struct whose keys are fields and whose lists are atomic.

A path is a tuple of fieldsV1 elements (`f:name`, `k:{"name":"x"}`, `v:"value"`); a field set
a set of paths. From SMD:
- typed/tofieldset.go: a value's field set is its leaves, each list item (also when it has
  children: `.spec.containers[name="app"]`), every empty map or null, and every map key that is
  not a declared field (a label, a ConfigMap key);
- typed/merge.go (ruleKeepRHS): maps by key, associative lists by key in SMD's order, sets as
  sets, atomic values replaced; two empty maps (or lists) are one leaf;
- typed/compare.go: Modified only at leaves (scalars, atomic values, both-empty), Added and
  Removed at every node that appears or goes, so a list item is never "modified", only its fields;
- typed/remove.go, fieldpath/set.go `EnsureNamedFieldsAreMembers`, fieldpath/path.go and
  serialize.go (the texts and the fieldsV1 form).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import Resource
from .decoding import NOT_OMITTED
from .openapi_schema import Shape, kind_def, shape

Path = tuple[str, ...]
Paths = set[Path]
class _Absent:
    """A map key that is not there (a JSON null is None)."""

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


# -- shapes ----------------------------------------------------------------------------------
def root(res: Resource) -> Shape:
    d = kind_def(res.group, res.version, res.kind)
    return Shape("struct", definition=d) if d else Shape("open")


def child(sh: Shape, key: str) -> Shape:
    if sh.kind == "struct" and sh.definition is not None:
        p = sh.definition.props.get(key)
        return shape(p.type, p.ann) if p else Shape("open")
    if sh.kind == "map":
        return shape(sh.elem)
    return Shape("open")


def is_field(sh: Shape, key: str) -> bool:
    """A struct's (or an undescribed type's) field, not a map's key."""
    return sh.kind != "map"


def granular_map(sh: Shape) -> bool:
    return sh.kind in ("struct", "map", "open") and not sh.atomic


def keyed_list(sh: Shape) -> bool:
    return sh.kind == "list" and sh.list_type in ("map", "set")


def item_key(sh: Shape, item: Any) -> str:
    """listItemToPathElement: a set item by value, an associative list item by its keys."""
    if sh.list_type == "set":
        return "v:" + json.dumps(item, separators=(",", ":"))
    keys = {k: item.get(k) for k in sh.keys if isinstance(item, dict) and k in item}
    return "k:" + json.dumps(dict(sorted(keys.items())), separators=(",", ":"))


def zero(sh: Shape) -> dict[str, Any]:
    """The Go zero object as the converter renders it: structs held by value present as {}."""
    out: dict[str, Any] = {}
    if sh.kind == "struct" and sh.definition is not None:
        for name, p in sh.definition.props.items():
            if "value" in p.ann and shape(p.type, p.ann).kind == "struct":
                out[name] = zero(shape(p.type, p.ann))
            elif (sh.definition.short, name) in NOT_OMITTED:
                out[name] = None
    return out


# -- ToFieldSet -------------------------------------------------------------------------------
def to_set(value: Any, sh: Shape, path: Path, out: Paths) -> None:
    """toFieldSetWalker: a map's entries (each empty or null one, and each key that is not a
    field, owned as a node), a keyed list's items (owned, and descended into), other leaves."""
    if granular_map(sh) and isinstance(value, dict):
        for k, v in value.items():
            at = (*path, f"f:{k}")
            to_set(v, child(sh, k), at, out)
            if v is None or v == {} or not is_field(sh, k):
                out.add(at)
    elif keyed_list(sh) and isinstance(value, list):
        elem = shape(sh.elem)
        keys = [item_key(sh, item) for item in value]
        for k, item in zip(keys, value, strict=True):
            if keys.count(k) == 1:  # duplicated items are owned as one, not descended into
                to_set(item, elem, (*path, k), out)
            out.add((*path, k))
    elif (granular_map(sh) or keyed_list(sh)) and value is None:
        pass  # the parent owns a null as a node
    elif path:
        out.add(path)


def field_set(res: Resource, obj: Any) -> Paths:
    out: Paths = set()
    to_set(obj, root(res), (), out)
    return out


# -- Merge (ruleKeepRHS) --------------------------------------------------------------------
def merge(lhs: Any, rhs: Any, sh: Shape) -> Any:
    if rhs is ABSENT:
        return copy.deepcopy(lhs)
    if lhs is ABSENT:
        return copy.deepcopy(rhs)
    if granular_map(sh) and isinstance(lhs, dict) and isinstance(rhs, dict):
        if not lhs and not rhs:
            return {}
        out: dict[str, Any] = {}
        for k in list(lhs) + [k for k in rhs if k not in lhs]:
            out[k] = merge(lhs.get(k, ABSENT), rhs.get(k, ABSENT), child(sh, k))
        return out
    if keyed_list(sh) and isinstance(lhs, list) and isinstance(rhs, list) and (lhs or rhs):
        return _merge_list(lhs, rhs, sh)
    return copy.deepcopy(rhs)


def _merge_list(lhs: list[Any], rhs: list[Any], sh: Shape) -> list[Any]:
    """mergingWalker.visitListItems: the live order kept, the applied items placed in theirs."""
    elem = shape(sh.elem)
    rpes = [item_key(sh, i) for i in rhs]
    if len(set(rpes)) != len(rpes):
        dup = next(p for p in rpes if rpes.count(p) > 1)
        raise ApiError.bad_request(f"duplicate entries for key {path_text((dup,))}")
    lpes = [item_key(sh, i) for i in lhs]
    observed_l: dict[str, Any] = {}
    for pe, item in zip(lpes, lhs, strict=True):
        observed_l[pe] = None if pe in observed_l else item
    observed_r = dict(zip(rpes, rhs, strict=True))
    shared = [pe for pe in rpes if pe in observed_l]
    next_shared = shared.pop(0) if shared else None
    merged_r: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged_r.add(pe)
                out.append(merge(_present(observed_l[pe]), observed_r[pe], elem))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_r and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in observed_r:
                out.append(copy.deepcopy(lhs[li]))
                li += 1
                continue
            if pe in merged_r:
                li += 1
        if ri < len(rpes):
            pe = rpes[ri]
            merged_r.add(pe)
            out.append(merge(_present(observed_l.get(pe, ABSENT)), observed_r[pe], elem))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


def _present(v: Any) -> Any:
    return ABSENT if v is None else v


# -- Compare ----------------------------------------------------------------------------------
class Comparison:
    def __init__(self) -> None:
        self.added: Paths = set()
        self.modified: Paths = set()
        self.removed: Paths = set()


def _visitable(v: Any, kind: type) -> bool:
    return v is ABSENT or v is None or isinstance(v, kind)


def compare(lhs: Any, rhs: Any, sh: Shape, path: Path, c: Comparison) -> None:
    """compareWalker: a granular map or keyed list with entries on either side is compared
    entry by entry and, if it appeared or went, is Added or Removed as a node; anything else is
    a leaf: Added, Removed or Modified."""
    if granular_map(sh) and _visitable(lhs, dict) and _visitable(rhs, dict) and (lhs or rhs):
        lm = lhs if isinstance(lhs, dict) else {}
        rm = rhs if isinstance(rhs, dict) else {}
        for k in list(lm) + [k for k in rm if k not in lm]:
            compare(lm.get(k, ABSENT), rm.get(k, ABSENT), child(sh, k), (*path, f"f:{k}"), c)
    elif keyed_list(sh) and _visitable(lhs, list) and _visitable(rhs, list) and (lhs or rhs):
        _compare_items(lhs if isinstance(lhs, list) else [], rhs if isinstance(rhs, list) else [], sh, path, c)
    else:
        if lhs is ABSENT:
            c.added.add(path)
        elif rhs is ABSENT:
            c.removed.add(path)
        elif lhs != rhs:
            c.modified.add(path)
        return
    if lhs is ABSENT:
        c.added.add(path)
    elif rhs is ABSENT:
        c.removed.add(path)


def _compare_items(lhs: list[Any], rhs: list[Any], sh: Shape, path: Path, c: Comparison) -> None:
    elem = shape(sh.elem)
    lv: dict[str, list[Any]] = {}
    rv: dict[str, list[Any]] = {}
    for item in lhs:
        lv.setdefault(item_key(sh, item), []).append(item)
    for item in rhs:
        rv.setdefault(item_key(sh, item), []).append(item)
    for pe in list(lv) + [p for p in rv if p not in lv]:
        ls, rs = lv.get(pe, []), rv.get(pe, [])
        p = (*path, pe)
        if len(ls) <= 1 and len(rs) <= 1:
            compare(ls[0] if ls else ABSENT, rs[0] if rs else ABSENT, elem, p, c)
        elif len(ls) >= 2 and len(rs) >= 2:
            if ls != rs:
                c.modified.add(p)
        elif len(ls) >= 2:
            if rs:
                compare(ABSENT, rs[0], elem, p, c)
            c.removed.add(p)
        else:
            if ls:
                compare(ls[0], ABSENT, elem, p, c)
            c.added.add(p)


# -- RemoveItems, EnsureNamedFieldsAreMembers -------------------------------------------------
def _with_prefix(paths: Paths, pe: str) -> Paths:
    return {p[1:] for p in paths if len(p) > 1 and p[0] == pe}


def remove(value: Any, paths: Paths, sh: Shape) -> Any:
    """removingWalker: `value` without the list and map items `paths` name (None if emptied)."""
    if keyed_list(sh):
        if not isinstance(value, list) or not value:
            return None
        elem = shape(sh.elem)
        items = []
        for item in value:
            pe = item_key(sh, item)
            if (pe,) in paths:
                continue
            sub = _with_prefix(paths, pe)
            items.append(remove(item, sub, elem) if sub else item)
        return items or None
    if granular_map(sh):
        if not isinstance(value, dict) or not value:
            return None
        out = {}
        for k, v in value.items():
            pe = f"f:{k}"
            if (pe,) in paths:
                continue
            sub = _with_prefix(paths, pe)
            out[k] = remove(v, sub, child(sh, k)) if sub else v
        return out or None
    return value if not (sh.kind == "list" or sh.atomic) else None


def ensure_named(paths: Paths, root: Shape) -> Paths:
    """Every struct field above a member becomes a member too (a map's keys do not)."""
    out = set(paths)
    for p in paths:
        sh = root
        for i, part in enumerate(p[:-1]):
            if part.startswith("f:"):
                if sh.kind in ("struct", "open") and is_field(sh, part[2:]):
                    out.add(p[: i + 1])
                sh = child(sh, part[2:])
            elif part.startswith("k:") and sh.kind == "list":
                sh = shape(sh.elem)
            else:
                break
    return out


def drop_nulls(value: Any) -> Any:
    """The object as the typed round trip leaves it: what pruning nulled is gone."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


# -- fieldsV1 and texts ----------------------------------------------------------------------
def to_fields_v1(paths: Paths) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for p in paths:
        node = tree
        for part in p:
            node = node.setdefault(part, {})

    def render(node: dict[str, Any], path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node and path in paths:
            out["."] = {}
        for k in sorted(node):
            out[k] = render(node[k], (*path, k))
        return out

    return render(tree, ())


def from_fields_v1(fields: dict[str, Any], path: Path = ()) -> Paths:
    out: Paths = set()
    for k, v in (fields or {}).items():
        if k == ".":
            out.add(path)
        elif not v:
            out.add((*path, k))
        else:
            out |= from_fields_v1(v, (*path, k))
    return out


def path_text(p: Path) -> str:
    """fieldpath.Path.String(): `.spec.containers[name="x"].image`."""
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


def ordered(paths: Paths) -> list[Path]:
    """Set.Iterate: at each node its members first, then its children, each in element order
    (field names before keys before values)."""
    rank = {"f:": 0, "k:": 1, "v:": 2, "i:": 3}
    return sorted(paths, key=lambda p: [(len(p) - i > 1, rank.get(e[:2], 4), e[2:]) for i, e in enumerate(p)])


