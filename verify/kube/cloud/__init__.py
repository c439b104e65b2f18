"""Managed clusters' tokens minted in-process when their exec plugin is not installed (an image
without the cloud CLIs), as Argo CD's argocd-k8s-auth and Flux do: the same token the plugin would
print, from the same standard credentials. Only a command whose arguments are all understood is
minted; any other missing plugin stays plugins.run's "not installed" line."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from verify.kube.cloud import aks, eks, gke
from verify.kube.plugins import Credential

Minter = Callable[..., Credential]
# each cloud's (parse, mint): parse(command, args) gives a request, or None when not its plugin
_CLOUDS: tuple[tuple[Callable[[str, list[str]], Any], Minter], ...] = (
    (eks.parse, eks.mint),
    (gke.parse, gke.mint),
    (aks.parse, aks.mint),
)


def minter(exec_cfg: Mapping[str, Any]) -> Minter | None:
    """What mints this plugin's credential in-process (called with `timeout` and `environ`), or
    None when the plugin is not one of the known cloud plugins run as they are written."""
    command = os.path.basename(str(exec_cfg.get("command") or ""))
    args = [str(a) for a in exec_cfg.get("args") or []]
    for parse, mint in _CLOUDS:
        request = parse(command, args)
        if request is not None:
            return functools.partial(_with_plugin_env, mint, request, exec_cfg)
    return None


def _with_plugin_env(
    mint: Callable[..., Credential],
    request: Any,
    exec_cfg: Mapping[str, Any],
    *,
    timeout: float,
    environ: Mapping[str, str],
) -> Credential:
    """The plugin's own `env` entries apply as when it runs (`aws eks update-kubeconfig
    --profile P` writes AWS_PROFILE there, a GKE kubeconfig may name GOOGLE_APPLICATION_CREDENTIALS,
    `kubelogin convert-kubeconfig` AZURE_CONFIG_DIR)."""
    env = dict(environ)
    for item in exec_cfg.get("env") or []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            env[item["name"]] = str(item.get("value", ""))
    return mint(request, exec_cfg=exec_cfg, timeout=timeout, environ=env)
