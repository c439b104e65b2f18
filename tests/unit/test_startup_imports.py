"""What a run imports before its first request to the cluster: importing the official `kubernetes`
package (~0.4 s of CPU: every generated API and model class) or a cloud SDK there would be most of
rollout-verify's start-up, so none may creep back in (`make bench` prints the start-up time).
pydantic-settings does load there: it reads and checks the `VERIFY_*` settings (the design names
it; ~70 ms of CPU with pydantic, nearly all of it their imports, asyncio and python-dotenv among
them, which no choice of ours skips: the price of not keeping a copy of its behaviour). What a run
can skip it does: pydantic's plugin scan (verify/__main__.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import REPO

HEAVY = ("kubernetes", "google", "botocore", "boto3", "azure", "msal", "requests_oauthlib")
SETTINGS = {"pydantic", "pydantic_settings"}  # the settings' reader and checker: loaded by every run

_CONNECT = """
import json, os, sys
from verify.cli import run  # noqa: F401  (what `python -m verify` imports)
from verify.flow.run import execute  # noqa: F401  (and what a run imports: the flow, the execs)
from verify.kube.exec import Exec  # noqa: F401
from verify.config.job import load_job
from verify.kube.connection import connect
job = load_job(argv=["--deployment", "web", "--expect-env", "A"], environ=os.environ)
connection = connect(kubeconfig=None, context=None, environ=os.environ)
connection.close()
print(json.dumps(sorted(sys.modules)))
"""


def _kubeconfig(path: Path) -> Path:
    path.write_text(
        json.dumps(
            {
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True},
                    }
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_a_run_imports_neither_the_official_client_nor_a_cloud_sdk(tmp_path: Path) -> None:
    env = {"KUBECONFIG": str(_kubeconfig(tmp_path / "kc")), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", _CONNECT], env=env, cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    modules = set(json.loads(out))
    loaded = {m.split(".")[0] for m in modules}
    assert "httpx" in loaded and "verify.kube.connection" in modules  # it did connect
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert loaded >= SETTINGS
    # --config's models are built only when a --config is given; backoff only once a call has
    # failed (pydantic-settings imports asyncio itself, so that is no longer saved)
    assert "verify.config.file" not in modules
    assert "backoff" not in loaded


# the modules loaded when `python -m verify` opens its first connection, seen by an audit hook
# (nothing patched); the server is a closed port, so the run then fails within its --timeout
_FIRST_CONNECT = """
import json, runpy, sys
OUT = sys.argv[1]
def hook(event, args):
    if event == "socket.connect" and not hook.seen:
        hook.seen = True
        with open(OUT, "w") as fh:
            json.dump(sorted(sys.modules), fh)
hook.seen = False
sys.addaudithook(hook)
sys.argv = ["rollout-verify", "--deployment", "web", "--expect-env", "A", "--timeout", "1"]
runpy.run_module("verify", run_name="__main__")
"""


def test_what_only_the_workloads_need_loads_after_the_first_request(tmp_path: Path) -> None:
    env = {"KUBECONFIG": str(_kubeconfig(tmp_path / "kc")), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    seen = tmp_path / "modules.json"
    run = subprocess.run(
        [sys.executable, "-c", _FIRST_CONNECT, str(seen)], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert run.returncode == 3, run.stderr[-400:]  # the cluster is unreachable: the run did try
    modules = set(json.loads(seen.read_text()))
    assert "verify.flow.run" in modules and "httpx" in modules  # the run had started
    loaded = {m.split(".")[0] for m in modules}
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert loaded >= SETTINGS  # the settings were read by pydantic-settings before the request
    # the exec transport, the verdicts, the per-workload flow, the renderers, the cloud minters
    later = {"websocket", "verify.findings", "verify.flow.workload", "verify.report.markdown", "verify.kube.cloud"}
    assert not (later & modules), sorted(later & modules)


_PLUGIN_SCAN = """
import json, os, runpy, sys
runpy.run_module("verify", run_name="verify.__main__")  # its start-up, without running main()
from pydantic.plugin import _loader
print(json.dumps({"scanned": _loader._plugins is not None, "left": os.environ.get("PYDANTIC_DISABLE_PLUGINS"),
                  "settings": "verify.config.settings" in sys.modules}))
"""


@pytest.mark.parametrize("given", [None, "some-plugin"], ids=["unset", "set-by-the-user"])
def test_the_start_up_builds_its_models_without_pydantics_plugin_scan_and_gives_the_environment_back(
    given: str | None,
) -> None:
    """pydantic scans every installed distribution's entry points for plugins at its first model;
    a run uses none, so its start-up switches the scan off with pydantic's own variable, then takes
    the variable back (exec credential plugins get the environment as it was given). A value the
    user set is theirs: pydantic reads it (and scans), and it stays."""
    env = {"PATH": "/usr/bin:/bin", **({"PYDANTIC_DISABLE_PLUGINS": given} if given else {})}
    out = subprocess.run(
        [sys.executable, "-c", _PLUGIN_SCAN], env=env, cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    seen = json.loads(out)
    assert seen["settings"]  # the settings' models were built
    assert seen == {"scanned": given is not None, "left": given, "settings": True}
