"""Volume contents as the kubelet projects them (configMap, secret, projected, downwardAPI), and
its AtomicWriter: a timestamped directory swapped in under `..data`."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..storage.store import Obj
from .environment import field_value
from .objectcache import object_data
from .tokens import TokenError

if TYPE_CHECKING:
    from .objectcache import ObjectCache


class MountError(Exception):
    """A volume cannot be set up: the pod stays in ContainerCreating."""

    volume = ""  # the volume's name, for the FailedMount event


def volume_files(
    cache: ObjectCache, pod: Obj, vol: Obj, *, token: Callable[[Obj, Obj], bytes] | None = None
) -> dict[str, tuple[bytes, int]] | None:
    """The files a volume holds now, as the kubelet would project them; None for plain dirs.
    `token(pod, source)` is the kubelet's token manager (tokens.py) for serviceAccountToken sources."""
    ns = pod["metadata"]["namespace"]
    if "configMap" in vol:
        src = vol["configMap"]
        return _project(cache, "ConfigMap", ns, src.get("name", ""), src, src.get("defaultMode", 0o644))
    if "secret" in vol:
        src = vol["secret"]
        return _project(cache, "Secret", ns, src.get("secretName", ""), src, src.get("defaultMode", 0o644))
    if "projected" in vol:
        mode = vol["projected"].get("defaultMode", 0o644)
        files: dict[str, tuple[bytes, int]] = {}
        for s in vol["projected"].get("sources") or []:
            if "configMap" in s:
                files.update(
                    _project(cache, "ConfigMap", ns, s["configMap"].get("name", ""), s["configMap"], mode)
                )
            elif "secret" in s:
                files.update(_project(cache, "Secret", ns, s["secret"].get("name", ""), s["secret"], mode))
            elif "downwardAPI" in s:
                files.update(_downward(pod, s["downwardAPI"], mode))
            elif "serviceAccountToken" in s and token is not None:
                src = s["serviceAccountToken"]
                try:
                    files[src.get("path", "token")] = (token(pod, src), mode)
                except TokenError as e:
                    raise MountError(str(e)) from None
        return files
    if "downwardAPI" in vol:
        return _downward(pod, vol["downwardAPI"], vol["downwardAPI"].get("defaultMode", 0o644))
    return None


def _project(
    cache: ObjectCache, kind: str, ns: str, name: str, src: Obj, mode: int
) -> dict[str, tuple[bytes, int]]:
    obj = cache.get(kind, ns, name)
    optional = bool(src.get("optional"))
    if obj is None:
        if optional:
            return {}
        raise MountError(f'{kind.lower()} "{name}" not found')
    data = object_data(obj)
    items = src.get("items")
    if not items:
        return {k: (v, mode) for k, v in data.items()}
    out = {}
    for it in items:
        if it["key"] not in data:
            if optional:
                continue
            raise MountError(
                f"configmap references non-existent config key: {it['key']}"
                if kind == "ConfigMap"
                else f"references non-existent secret key: {it['key']}"
            )
        out[it.get("path", it["key"])] = (data[it["key"]], it.get("mode", mode))
    return out


def _downward(pod: Obj, src: Obj, mode: int) -> dict[str, tuple[bytes, int]]:
    out = {}
    for it in src.get("items") or []:
        if "fieldRef" in it:
            out[it["path"]] = (
                field_value(pod, it["fieldRef"].get("fieldPath", "")).encode(),
                it.get("mode", mode),
            )
    return out


_TS = 0


def atomic_write(d: Path, files: dict[str, tuple[bytes, int]]) -> bool:
    """The kubelet's AtomicWriter: a timestamped dir, `..data` symlink swap, top-level symlinks."""
    global _TS
    data_link = d / "..data"
    if data_link.exists():
        cur = d / os.readlink(data_link)
        if _read_tree(cur) == {k: v[0] for k, v in files.items()} and all(
            (cur / k).stat().st_mode & 0o777 == m for k, (_, m) in files.items()
        ):
            return False
    else:
        cur = None
    _TS += 1
    ts = dt.datetime.now(dt.UTC).strftime("..%Y_%m_%d_%H_%M_%S.") + f"{os.getpid()}{_TS:06d}"
    new = d / ts
    new.mkdir()
    for rel, (content, mode) in files.items():
        p = new / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        os.chmod(p, mode)
    tmp = d / "..data_tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(ts, tmp)
    os.rename(tmp, data_link)
    tops = {rel.split("/")[0] for rel in files}
    for entry in os.listdir(d):
        if entry.startswith(".."):
            continue
        if entry not in tops:
            (d / entry).unlink()
    for t in tops:
        link = d / t
        if not link.is_symlink():
            os.symlink(f"..data/{t}", link)
    if cur is not None:
        shutil.rmtree(cur, ignore_errors=True)
    return True


def _read_tree(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = p.read_bytes()
    return out
