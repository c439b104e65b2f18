"""What a list reads: `resourceVersion` with `resourceVersionMatch` (unset, NotOlderThan, Exact),
`limit`/`continue` pagination with continue tokens and `remainingItemCount`, and their errors.

Upstream (kubernetes/kubernetes, staging/src/k8s.io/...):
- apimachinery/pkg/apis/meta/internalversion/validation/validation.go ValidateListOptions: the 422s
  for a resourceVersionMatch without resourceVersion, with continue, unknown, or Exact at "0";
- apiserver/pkg/storage/interfaces.go ValidateListOptions and continue.go: continue tokens
  (base64url JSON {"v","rv","start"}), 400 for a resourceVersion beside one; the legacy rule that
  `limit` with a non-zero resourceVersion and no match reads exactly that revision;
- apiserver/pkg/storage/etcd3/store.go GetList + errors.go: a read at a compacted revision is 410
  (`expired`; with a continue token `inconsistentContinue` and a token for the latest revision),
  `remainingItemCount` only when no selector narrows the list;
- apiserver/pkg/storage/cacher (delegator.go, cacher.go waitUntilFreshAndBlock with blockTimeout 3 s):
  NotOlderThan a resourceVersion the cache has not reached waits, then 504 "Too large resource version".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from ..storage.history import Compacted, decode_continue, encode_continue, etcd_key
from ..storage.resources import Resource
from ..storage.store import Obj

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..storage.store import Store

BLOCK_TIMEOUT = 3.0  # cacher.go blockTimeout


@dataclass
class Page:
    items: list[Obj]
    rv: int
    cont: str = ""
    remaining: int | None = None

    def list_meta(self) -> dict[str, object]:
        meta: dict[str, object] = {"resourceVersion": str(self.rv)}
        if self.cont:
            meta["continue"] = self.cont
        if self.remaining is not None:
            meta["remainingItemCount"] = self.remaining
        return meta


def validate(query: Mapping[str, str]) -> None:
    """internalversion/validation ValidateListOptions (list, not watch)."""
    rv, match, cont = (
        query.get("resourceVersion", ""),
        query.get("resourceVersionMatch", ""),
        query.get("continue", ""),
    )
    errs: list[tuple[str, str]] = []
    if match:
        if not rv:
            errs.append(
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if cont:
            errs.append(
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in ("Exact", "NotOlderThan"):
            errs.append(
                (
                    "resourceVersionMatch",
                    f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""',
                )
            )
        if match == "Exact" and rv == "0":
            errs.append(
                (
                    "resourceVersionMatch",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if errs:
        raise ApiError.list_options_invalid(errs)


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


async def read_page(
    store: Store,
    query: Mapping[str, str],
    res: Resource,
    ns: str | None,
    keep: Callable[[Obj], bool],
    selected: bool,
) -> Page:
    """One list response's items; `keep` is the selectors' filter, `selected` whether any is set."""
    validate(query)
    rv_s, match, cont = (
        query.get("resourceVersion", ""),
        query.get("resourceVersionMatch", ""),
        query.get("continue", ""),
    )
    limit = max(_int(query.get("limit") or "0") or 0, 0)
    at: int | None = None  # read etcd at this revision; None: the latest
    start = ""
    if cont:
        start, token_rv = decode_continue(cont)
        if rv_s not in ("", "0"):
            raise ApiError.bad_request("specifying resource version is not allowed when using continue")
        if token_rv > 0:  # -1: continue at the latest revision (after a compacted token)
            at = token_rv
    else:
        rv = _int(rv_s) if rv_s not in ("", "0") else None
        if rv is not None:
            if match == "Exact" or (not match and limit > 0):
                at = rv
            await _wait_fresh(store, rv)
    try:
        items = store.list_at(res, ns, at) if at is not None else store.list(res, ns)
    except Compacted:
        if cont:
            raise ApiError.continue_expired(encode_continue(start, -1)) from None
        raise ApiError.list_expired() from None
    list_rv = at if at is not None else store.rv

    def rel(o: Obj) -> str:  # the key below the listed prefix (/registry/pods/<ns>/ or /registry/pods/)
        return str(o["metadata"]["name"]) if ns else etcd_key(o)

    matched = [o for o in items if (not start or rel(o) >= start) and keep(o)]
    if limit <= 0 or len(matched) <= limit:
        return Page(matched, list_rv)
    page = matched[:limit]
    return Page(
        page,
        list_rv,
        encode_continue(rel(page[-1]) + "\x00", list_rv),
        None if selected else len(matched) - limit,
    )


async def _wait_fresh(store: Store, rv: int) -> None:
    """A resourceVersion the cache has not reached yet: wait up to blockTimeout, then 504."""
    if rv <= store.rv:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BLOCK_TIMEOUT
    while store.rv < rv and loop.time() < deadline:
        await asyncio.sleep(0.05)
    if store.rv < rv:
        raise ApiError.too_large_rv(rv, store.rv)
