"""The container runtime: one container process, started as containerd + runc start one.

The process joins its pod's network namespace (the sandbox), gets a mount namespace of its own
with an overlay of the host root, its volumes and the kubelet's /etc/hosts and /etc/hostname bound
in, and `chroot`s into it. Then, as runc's init does, it stops before exec'ing the user's
program: the runtime looks the program up inside the container's root (runc's
`exec.LookPath(args[0])`, libcontainer/standard_init_linux.go) and either lets it go on or kills
it and reports a start error (`StartError`, exit code 128, containerd's text)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..storage.store import Obj, now_rfc3339
from .identity import bounding_set
from .images import DEFAULT_PATH, Image, lookup_error, standin, start_error
from .logpump import pump

if TYPE_CHECKING:
    from .containers import ContainerRuntime, PodRuntime
    from .sandbox import Sandbox


@dataclass
class StartError(Exception):
    message: str


def _mount_script(rt: PodRuntime, c: Obj, merged: Path, cdir: Path) -> list[str]:
    lines = [
        "set -e",
        f"/usr/bin/mount -t overlay overlay -o lowerdir=/,upperdir={shlex.quote(str(cdir / 'upper'))},"
        f"workdir={shlex.quote(str(cdir / 'work'))} {shlex.quote(str(merged))}",
        f"/usr/bin/mount -t proc proc {shlex.quote(str(merged / 'proc'))}",
        f"/usr/bin/mount --rbind /dev {shlex.quote(str(merged / 'dev'))}",
    ]
    # the kubelet's managed /etc/hosts and the sandbox's /etc/hostname (kubelet_pods.go makeMounts)
    for name, target in (("etc-hosts", "etc/hosts"), ("hostname", "etc/hostname")):
        src = rt.dir / name
        if src.exists():
            lines.append(f"/usr/bin/mount --bind {shlex.quote(str(src))} {shlex.quote(str(merged / target))}")
    for vm in c.get("volumeMounts") or []:
        vol = rt.volumes.get(vm["name"])
        if vol is None:
            continue
        # resolve symlinks as the container would (its root is an overlay of the host's /),
        # e.g. /var/run -> /run, so the bind lands where chroot'd paths will look
        target = merged / os.path.realpath(vm["mountPath"]).lstrip("/")
        q = shlex.quote(str(target))
        if vm.get("subPath"):
            # bind the file as resolved now: later atomic updates swap ..data and never reach it
            src = (vol / vm["subPath"]).resolve()
            if src.is_dir():
                lines.append(f"/usr/bin/mkdir -p {q}")
            else:
                lines.append(f"/usr/bin/mkdir -p {shlex.quote(str(target.parent))} && /usr/bin/touch {q}")
            lines.append(f"/usr/bin/mount --bind {shlex.quote(str(src))} {q}")
        else:
            lines.append(f"/usr/bin/mkdir -p {q} && /usr/bin/mount --bind {shlex.quote(str(vol))} {q}")
        if vm.get("readOnly"):
            lines.append(f"/usr/bin/mount -o remount,bind,ro {q}")
    return lines


# inside the container's root: wait for the runtime's go-ahead on stdin (runc's exec fifo), then
# stdin becomes /dev/null (or stays the open pipe with `stdin: true`), enter the working directory
# and run the program. This shell stays PID 1 of the container's PID namespace as a small init
# (as `docker run --init`'s tini): the kernel drops a signal sent to a namespace's init that has
# no handler for it, so a program that never installs a SIGTERM handler (python's http.server)
# would ignore the kubelet's SIGTERM and wait out every grace period. It passes SIGTERM/SIGINT on
# and exits with the program's status; it has the program's environment, user and root, so
# `/proc/1/environ` and `/proc/1/root` show what the program sees.
def _gate(keep_stdin: bool) -> str:
    return (
        "read -r go || exit 128; "
        + ("" if keep_stdin else "exec </dev/null; ")
        + 'if [ -n "$0" ]; then cd "$0" 2>/dev/null; fi; '
        + "trap 'kill -TERM \"$c\" 2>/dev/null' TERM INT; "
        # (dash gives an async list /dev/null as stdin unless it is redirected from another fd)
        + 'exec 3<&0; "$@" 0<&3 3<&- & c=$!; exec 3<&-; '
        + 'while :; do wait "$c"; s=$?; kill -0 "$c" 2>/dev/null || exit "$s"; done'
    )


def _setpriv(crt: ContainerRuntime, user: tuple[int, int]) -> str:
    """The setpriv prefix that makes a process the container's: its capability bounding set, and
    its user and group without supplementary groups (a non-root user keeps no capability)."""
    parts = [f"--bounding-set={crt.caps}"] if crt.caps else []
    if user != (0, 0):
        parts += [f"--reuid={user[0]}", f"--regid={user[1]}", "--clear-groups"]
    return f"/usr/bin/setpriv {' '.join(parts)} -- " if parts else ""


def _pid_namespace(rt: PodRuntime, c: Obj) -> str | None:
    """The PID namespace an ephemeral container with `targetContainerName` joins (the target's,
    as containerd's NamespaceMode_TARGET); None: a namespace of its own."""
    target = c.get("targetContainerName")
    if not target:
        return None
    crt = rt.containers.get(target)
    if crt is None or crt.pid is None:
        raise StartError(
            "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
            f'target container "{target}" is not running: unknown'
        )
    return f"/proc/{crt.pid}/ns/pid"


async def _inner_pid(pid: int, proc: asyncio.subprocess.Process) -> int | None:
    """The container's init: the child `unshare -p -f` (or `nsenter --pid`) forked."""
    for _ in range(4000):
        if proc.returncode is not None:
            return None
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
        except OSError:
            return None
        if kids:
            return int(kids[0])
        await asyncio.sleep(0.005)
    return None


async def start_process(
    rt: PodRuntime,
    c: Obj,
    crt: ContainerRuntime,
    argv: list[str],
    env: dict[str, str],
    img: Image,
    sandbox: Sandbox,
    *,
    user: tuple[int, int] = (0, 0),
    read_only: bool = False,
) -> None:
    """Start `argv` as container `c`, as `user` (uid, gid); on return it runs (crt.proc, crt.pid
    set: crt.pid is its init, PID 1 of its PID namespace). A program that cannot be found raises
    StartError with the runtime's message, its process gone."""
    pid_ns = _pid_namespace(rt, c)
    cdir = rt.dir / "containers" / c["name"] / str(crt.restarts)
    for sub in ("upper", "work", "merged"):
        (cdir / sub).mkdir(parents=True, exist_ok=True)
    _image_layer(img, cdir / "upper")
    merged = cdir / "merged"
    path = env.get("PATH", DEFAULT_PATH)
    run = standin(argv, img, path)
    workdir = c.get("workingDir") or img.workdir
    keep_stdin = bool(c.get("stdin"))
    lines = _mount_script(rt, c, merged, cdir)
    if workdir:  # runc creates the working directory, as root, before it switches user
        lines.append(f"/usr/bin/mkdir -p {shlex.quote(str(merged / workdir.lstrip('/')))} || true")
    for d in img.open_dirs:  # a copy-up in this container's upper layer: the host's stays as it is
        lines.append(f"/usr/bin/chmod o+x {shlex.quote(str(merged / d.lstrip('/')))} || true")
    if read_only:  # readOnlyRootFilesystem: the root read-only, its volumes as they are
        lines.append(f"/usr/bin/mount -o remount,bind,ro {shlex.quote(str(merged))}")
    crt.caps = bounding_set(c)
    who = _setpriv(crt, user)
    lines.append(
        f"exec /usr/sbin/chroot {shlex.quote(str(merged))} {who}/bin/bash -c {shlex.quote(_gate(keep_stdin))} "
        f"{shlex.quote(workdir)} {' '.join(shlex.quote(a) for a in run)}"
    )
    log = rt.dir / "logs" / f"{c['name']}-{crt.restarts}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # the gate is the process's stdin; with `stdin: true` it stays open after the go-ahead (a shell
    # then waits on it, as under a runtime)
    gate_r, gate_w = os.pipe()
    log.write_bytes(b"")
    try:
        # join the pod's network namespace, then a mount namespace of the container's own and a PID
        # namespace of its own (unshare forks its init; it waits for it, SIGTERM blocked) or, for
        # an ephemeral container with a target, the target's (nsenter forks into it)
        ns_args = ["--pid=" + pid_ns] if pid_ns else []
        unshare = ["/usr/bin/unshare", "-m"] + ([] if pid_ns else ["-p", "-f"])
        proc = await asyncio.create_subprocess_exec(
            "/usr/bin/nsenter",
            f"--net={sandbox.netns}",
            *ns_args,
            "--",
            *unshare,
            "--propagation",
            "private",
            "--",
            # bash, not dash: dash drops variables whose names are not shell identifiers (a
            # ConfigMap key such as app.conf in envFrom) when it execs; a runtime passes every one
            "/bin/bash",
            "-c",
            "\n".join(lines),
            stdin=gate_r,
            # through a pipe to logpump.pump, which stamps each line's time (the CRI log format)
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    finally:
        os.close(gate_r)
    assert proc.stdout is not None
    crt.log_pump = asyncio.get_running_loop().create_task(pump(proc.stdout, log))
    inner = await _inner_pid(proc.pid, proc)
    crt.proc, crt.pid, crt.env = proc, inner or proc.pid, env
    crt.uid, crt.gid = user
    crt.log_paths.append(log)
    crt.container_id = "containerd://" + os.urandom(32).hex()
    # wait until the process sits in its own root (chroot done) and looks the program up there
    root = f"/proc/{crt.pid}/root"
    chrooted = False
    for _ in range(4000 if inner else 0):
        if proc.returncode is not None:
            break
        try:
            chrooted = os.readlink(root) != "/"
        except OSError:  # gone: its setup failed, which its exit code will show
            break
        if chrooted:
            break
        await asyncio.sleep(0.005)
    problem = lookup_error(argv[0], root, path, img) if chrooted else None
    if problem is None and chrooted:
        with contextlib.suppress(OSError):
            os.write(gate_w, b"go\n")
    if keep_stdin and problem is None:
        crt.stdin_fd = gate_w
    else:
        os.close(gate_w)
    if problem is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        close_stdin(crt)
        crt.pid = None
        raise StartError(start_error(problem))
    crt.started_at = now_rfc3339()


def _image_layer(img: Image, upper: Path) -> None:
    """The image's own files, under the container's writes (its upper layer) before its root is
    mounted: they shadow the host's, as the image's layer would (an overlay cannot stack a lower
    directory inside `/`, which is itself a lower)."""
    for path, content in img.files.items():
        target = upper / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(0o644)
    for path, points_to in img.links.items():
        link = upper / path.lstrip("/")
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(points_to)


def close_stdin(crt: ContainerRuntime) -> None:
    if crt.stdin_fd >= 0:
        with contextlib.suppress(OSError):
            os.close(crt.stdin_fd)
        crt.stdin_fd = -1


def exit_code(returncode: int) -> int:
    """A process killed by a signal: the runtime reports 128 + the signal (137, 143)."""
    return 128 - returncode if returncode < 0 else returncode
