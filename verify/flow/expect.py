"""What every container must show: the explicit expectations resolved against the live
ConfigMaps/Secrets (Secret values hashed at once, never kept), merged over what the pod template
implies (`derive`), and HTTP checks with their ConfigMap-backed values filled in."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from verify.config.job import TargetPlan
from verify.errors import Forbidden, SourceMissing
from verify.findings import Expectations, ExpectedFile
from verify.flow import csi
from verify.flow.derive import Ref, derive, mark_secret_files, referenced_objects, source_of
from verify.flow.lookup import Lookup
from verify.kube import objects
from verify.model import FileSpec, HttpExpectation


def resolve_files(lookup: Lookup, *, env: Sequence[str], files: Sequence[FileSpec]) -> Expectations:
    """Expected digests, read from the live ConfigMaps/Secrets; Secret values are hashed at once."""
    out: list[ExpectedFile] = []
    for spec in files:
        if spec.source == "sha256":
            out.append(ExpectedFile(path=spec.path, sha256=spec.digest.lower(), origin="sha256"))
            continue
        obj = lookup.source(spec.source, spec.name)
        if obj is None:
            raise SourceMissing(
                f"{spec.source} {spec.name} (for {spec.path}) does not exist in namespace {lookup.namespace}"
            )
        if spec.source == "configmap":
            data = obj.get("data") or {}
            binary = obj.get("binaryData") or {}
            if spec.key in data:
                raw = str(data[spec.key]).encode()
            elif spec.key in binary:
                raw = base64.b64decode(binary[spec.key])
            else:
                raise SourceMissing(f"configmap {spec.name} has no key {spec.key} (for {spec.path})")
        else:
            sdata = obj.get("data") or {}
            if spec.key not in sdata:
                raise SourceMissing(f"secret {spec.name} has no key {spec.key} (for {spec.path})")
            raw = base64.b64decode(sdata[spec.key])
        out.append(
            ExpectedFile(
                path=spec.path,
                sha256=hashlib.sha256(raw).hexdigest(),
                origin=f"{spec.source} {spec.name}/{spec.key}",
                secret=spec.source == "secret",
                # its metadata (immutable, uid, created) for the diagnosis, as --from-spec gives it
                source=source_of(spec.source, obj),
            )
        )
        del raw
    return Expectations(env=tuple(env), files=tuple(out))


def resolve_http(lookup: Lookup, checks: Sequence[HttpExpectation]) -> tuple[HttpExpectation, ...]:
    """HTTP checks with `equals-configmap` replaced by the ConfigMap key's live value."""
    out: list[HttpExpectation] = []
    for check in checks:
        if not check.equals_configmap:
            out.append(check)
            continue
        name, _, key = check.equals_configmap.partition("/")
        obj = lookup.source("configmap", name)
        data = (obj or {}).get("data") or {}
        if obj is None or key not in data:
            what = f"configmap {name}" if obj is None else f"configmap {name} has no key {key}: it"
            raise SourceMissing(
                f"{what} (for the HTTP check {check.label}) does not exist in {lookup.namespace}"
            )
        out.append(
            dataclasses.replace(
                check,
                equals=json.dumps(str(data[key])),
                equals_configmap="",
                origin=f"configmap {name}/{key}",
            )
        )
    return tuple(out)


def container_expectations(
    lookup: Lookup, *, plan: TargetPlan, workload: dict[str, Any], hmac_key: bytes
) -> dict[str, Expectations]:
    """Per container: the explicit expectations, merged over what the pod template implies."""
    explicit = resolve_files(lookup, env=plan.expect_env, files=plan.expect_file)
    pod_spec = objects.pod_spec(workload)
    names = [n for n in objects.container_names(pod_spec) if not plan.containers or n in plan.containers]
    if not plan.from_spec:
        return {n: mark_secret_files(expectations=explicit, pod_spec=pod_spec, container=n) for n in names}
    sources: dict[Ref, dict[str, Any] | None] = {}
    for kind, name in sorted(referenced_objects(pod_spec=pod_spec)):
        sources[(kind, name)] = lookup.source(kind, name)
    classes = read_classes(lookup, pod_spec=pod_spec, sources=sources)
    derived = derive(pod_spec=pod_spec, containers=names, objects=sources, hmac_key=hmac_key, classes=classes)
    return {
        n: mark_secret_files(
            expectations=derived.get(n, Expectations()).merged(explicit), pod_spec=pod_spec, container=n
        )
        for n in names
    }


def read_classes(
    lookup: Lookup, *, pod_spec: Mapping[str, Any], sources: MutableMapping[Ref, Any]
) -> dict[str, dict[str, Any] | None]:
    """The SecretProviderClasses the template's CSI volumes name, and (into `sources`) the
    Secrets they sync; a synced Secret RBAC withholds leaves its files checked by presence."""
    classes: dict[str, dict[str, Any] | None] = {}
    for name in sorted(csi.classes_of(pod_spec)):
        spc = lookup.provider_class(name)
        if spc is None and name in lookup.classes_denied:
            continue
        classes[name] = spc
        for secret in sorted(csi.synced_secrets(spc or {})):
            if ("secret", secret) in sources:
                continue
            try:
                sources[("secret", secret)] = lookup.source("secret", secret)
            except Forbidden:
                lookup.note(
                    f"cannot read secret {secret} (no permission: `get secrets/{secret}`): the files "
                    f"secretproviderclass {name} syncs to it are checked by presence only"
                )
    return classes
