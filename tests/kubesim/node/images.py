"""The image catalogue: what each image the tests, docs and demo name would give a container
(ENTRYPOINT, CMD, Env, User, WorkingDir, /etc/passwd homes, whether it has a shell and userland),
and the runtime's rules for turning an image and a container spec into a process.

Containers run on an overlay of the host root, so an image "with a userland" (busybox, debian,
python images) is stood in for by the host's binaries. An image's own programs the host lacks
(`nginx`, a distroless app's `/server`) are *stand-ins*: a command the runtime runs instead, a
long-running server. Shell-less images (distroless) have only their stand-ins: any other
command is not found, exactly as runc would report it.

An image not in the catalogue is taken to be an application image with the host's userland,
running as root, whose default process (`CMD`) serves until stopped (a stand-in `sleep infinity`).
That is the documented default: name your image in CATALOGUE to give it another behaviour.

An image's own files (nginx's welcome page, python's `/usr/local/bin/python`) are its layer:
written into each container's upper layer before its root is mounted (node/runtime.py), so a
stand-in serves them from the image's paths and never a host folder.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVE = ("/usr/bin/sleep", "infinity")  # a stand-in for a program that serves until stopped
KUBESIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGAPP = os.path.join(KUBESIM, "apps", "configapp.py")
REPO = os.path.dirname(os.path.dirname(KUBESIM))


@dataclass(frozen=True)
class Image:
    """An image's config (`docker inspect .Config`) as far as a container's start depends on it."""

    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = (("PATH", DEFAULT_PATH),)
    user: int = 0
    workdir: str = ""
    passwd: dict[int, str] = field(default_factory=lambda: {0: "/root"})  # uid -> home (/etc/passwd)
    shell: bool = True  # has a userland (the host's binaries stand in for it)
    standins: dict[str, tuple[str, ...]] = field(default_factory=dict)  # its own programs -> what runs
    aliases: dict[str, str] = field(default_factory=dict)  # its programs the host has elsewhere (args kept)
    size: int = 0  # bytes, as `Successfully pulled image ... Image size:` reports it
    # directories any user may pass through in this image although the host's may not: the host
    # files standing in for it live there (e.g. a python under /root, mode 0700, while the image
    # has its venv under /opt, open to its non-root user); opened in the container's overlay only
    open_dirs: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # its layer's files: path -> content
    links: dict[str, str] = field(default_factory=dict)  # its layer's symlinks: path -> target


WEBSERVER = os.path.join(KUBESIM, "apps", "webserver.py")
NGINX_VERSION = "1.27.5"
NGINX_ROOT = "/usr/share/nginx/html"
# nginx answers on :80 from its own html root: a static file server stands in for it, with
# nginx's Server header and error pages (apps/webserver.py)
_NGINX_SERVER = ("/usr/bin/python3", WEBSERVER, "--root", NGINX_ROOT, "--port", "80", "--server", f"nginx/{NGINX_VERSION}")
# the welcome page of docker.io/library/nginx (/usr/share/nginx/html/index.html)
_NGINX_HEAD = """<!DOCTYPE html>
<html>
<head>
<title>{title}</title>
<style>
html {{ color-scheme: light dark; }}
body {{ width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }}
</style>
</head>
<body>
"""
NGINX_WELCOME = _NGINX_HEAD.format(title="Welcome to nginx!") + """<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""
NGINX_50X = _NGINX_HEAD.format(title="Error") + """<h1>An error occurred.</h1>
<p>Sorry, the page you are looking for is currently unavailable.<br/>
Please try again later.</p>
<p>If you are the system administrator of this resource then you should check
the error log for details.</p>
<p><em>Faithfully yours, nginx.</em></p>
</body>
</html>
"""
HTTPD_ROOT = "/usr/local/apache2/htdocs"
_HTTPD_SERVER = ("/usr/bin/python3", WEBSERVER, "--root", HTTPD_ROOT, "--port", "80", "--server", "Apache/2.4.63 (Unix)")
# the Kubernetes components' images are distroless: only their binaries, which serve until stopped
_COMPONENT = {"shell": False, "env": (("PATH", DEFAULT_PATH),)}

def _closed_parents(path: str) -> tuple[str, ...]:
    """The directories above `path` that a user other than their owner cannot pass through."""
    parents = [os.path.dirname(path)]
    while parents[-1] != "/":
        parents.append(os.path.dirname(parents[-1]))
    return tuple(d for d in reversed(parents) if not os.stat(d).st_mode & 0o001)


CATALOGUE: dict[str, Image] = {
    # docker.io/library/busybox:1.36: CMD ["sh"] (exits at once without stdin), runs as root
    "busybox": Image(
        cmd=("sh",),
        passwd={0: "/root", 1: "/usr/sbin", 2: "/bin", 8: "/var/spool/mail", 33: "/var/www", 65534: "/home"},
        size=2_155_000,
    ),
    # docker.io/library/debian:bookworm: CMD ["bash"]
    "debian": Image(cmd=("bash",), passwd={0: "/root", 65534: "/nonexistent"}, size=48_480_000),
    # docker.io/library/nginx:1.27: the entrypoint script execs `nginx -g 'daemon off;'`, serving :80
    "nginx": Image(
        entrypoint=("/docker-entrypoint.sh",),
        cmd=("nginx", "-g", "daemon off;"),
        env=(
            ("PATH", DEFAULT_PATH),
            ("NGINX_VERSION", "1.27.5"),
            ("NJS_VERSION", "0.8.10"),
            ("PKG_RELEASE", "1~bookworm"),
        ),
        passwd={0: "/root", 101: "/nonexistent", 65534: "/nonexistent"},
        standins={"/docker-entrypoint.sh": _NGINX_SERVER, "/usr/sbin/nginx": _NGINX_SERVER},
        size=72_200_000,
        files={f"{NGINX_ROOT}/index.html": NGINX_WELCOME, f"{NGINX_ROOT}/50x.html": NGINX_50X},
    ),
    # docker.io/library/python:3: CMD ["python3"] (exits at once without a terminal), python on PATH
    "python": Image(
        cmd=("python3",),
        env=(("PATH", DEFAULT_PATH), ("LANG", "C.UTF-8")),
        passwd={0: "/root", 65534: "/nonexistent"},
        links={"/usr/local/bin/python": "/usr/bin/python3", "/usr/local/bin/python3": "/usr/bin/python3"},
        size=412_000_000,
    ),
    # docker.io/library/alpine and ubuntu: a shell by default
    "alpine": Image(cmd=("/bin/sh",), size=3_600_000),
    "ubuntu": Image(cmd=("/bin/bash",), passwd={0: "/root", 65534: "/nonexistent"}, size=29_700_000),
    # docker.io/library/httpd: httpd-foreground serves htdocs on :80
    "httpd": Image(
        cmd=("httpd-foreground",),
        env=(("PATH", "/usr/local/apache2/bin:" + DEFAULT_PATH), ("HTTPD_PREFIX", "/usr/local/apache2")),
        standins={"/usr/local/apache2/bin/httpd-foreground": _HTTPD_SERVER},
        files={f"{HTTPD_ROOT}/index.html": "<html><body><h1>It works!</h1></body></html>\n"},
        size=58_000_000,
    ),
    # docker.io/library/redis: redis-server serves until stopped
    "redis": Image(
        entrypoint=("docker-entrypoint.sh",),
        cmd=("redis-server",),
        standins={"/usr/local/bin/docker-entrypoint.sh": SERVE, "/usr/local/bin/redis-server": SERVE},
        size=45_000_000,
    ),
    # registry.k8s.io/pause: the sandbox's process
    "registry.k8s.io/pause": Image(entrypoint=("/pause",), shell=False, standins={"/pause": SERVE}, size=320_000),
    # a kind cluster's kube-system images (controllers/systempods.py)
    "registry.k8s.io/etcd": Image(standins={"/usr/local/bin/etcd": SERVE}, size=57_000_000, **_COMPONENT),
    **{
        f"registry.k8s.io/{c}": Image(standins={f"/usr/local/bin/{c}": SERVE}, size=30_000_000, **_COMPONENT)
        for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
    },
    "registry.k8s.io/kube-proxy": Image(standins={"/usr/local/bin/kube-proxy": SERVE}, size=30_000_000),
    "registry.k8s.io/coredns/coredns": Image(entrypoint=("/coredns",), shell=False, standins={"/coredns": SERVE}, size=18_600_000),
    "kindest/kindnetd": Image(shell=False, standins={"/bin/kindnetd": SERVE}, size=39_000_000),
    # gcr.io/distroless/static:nonroot: no ENTRYPOINT, no CMD, no shell; user nonroot (65532).
    # kubesim's distroless images stand for an application built FROM it, its binary at /server.
    "gcr.io/distroless": Image(
        env=(("PATH", DEFAULT_PATH), ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")),
        user=65532,
        workdir="/home/nonroot",
        passwd={0: "/root", 65532: "/home/nonroot", 65534: "/nonexistent"},
        shell=False,
        standins={"/server": SERVE},
        size=1_020_000,
    ),
    # scratch-based images: nothing at all but what they were built with
    "scratch": Image(passwd={}, shell=False, standins={"/server": SERVE}),
    # the test app (tests/kubesim/apps/configapp.py) on a python image: the host's python3
    "kubesim.local/configapp": Image(cmd=("python3", CONFIGAPP), size=51_000_000),
    # this repository's image (Dockerfile): ENTRYPOINT ["python", "-m", "verify"], root; its
    # /opt/venv python is the test venv's, its package this checkout's
    "ghcr.io/example/rollout-verify": Image(
        entrypoint=("python", "-m", "verify"),
        env=(("PATH", "/opt/venv/bin:" + DEFAULT_PATH), ("PYTHONPATH", REPO)),
        aliases={"python": sys.executable},
        size=60_000_000,
        open_dirs=_closed_parents(os.path.realpath(sys.executable)),
    ),
}
DEFAULT = Image(cmd=("serve",), standins={"serve": SERVE}, size=10_000_000)

# What kubesim's registries hold (node/registry.py): these repositories, each with every tag asked
# of it (a registry serves every tag it has; a tag holding one of Knobs.bad_image_markers, e.g.
# `doesnotexist`, is the missing one). Any other repository fails to pull; a test, doc, demo or
# benchmark that names another image registers it here. A repository here but not in CATALOGUE
# behaves as DEFAULT.
PUBLISHED: frozenset[str] = frozenset(
    {
        *(f"docker.io/library/{r}" for r in (
            "busybox", "debian", "nginx", "python", "alpine", "ubuntu", "httpd", "redis", "postgres",
            "mysql", "memcached", "node", "golang", "hello-world", "perl", "registry",
        )),
        "gcr.io/distroless/static",
        "gcr.io/distroless/static-debian12",
        "gcr.io/distroless/base-debian12",
        "registry.k8s.io/pause",
        "registry.k8s.io/etcd",
        "registry.k8s.io/kube-apiserver",
        "registry.k8s.io/kube-controller-manager",
        "registry.k8s.io/kube-scheduler",
        "registry.k8s.io/kube-proxy",
        "registry.k8s.io/coredns/coredns",
        "docker.io/kindest/kindnetd",
        "kubesim.local/configapp",
        "ghcr.io/example/rollout-verify",
        "ghcr.io/acme/rollout-verify",  # the release tool's tests pin it
        # the tests' private application image, and the image of the crash-loop fault
        "registry.local/app",
        "registry.local:5000/web",
        "docker.io/example/crashloop",
    }
)  # fmt: skip
# gcr.io/distroless/*:debug and :debug-nonroot: the same images plus busybox at /busybox (ENTRYPOINT
# ["/busybox/sh"], /busybox on PATH), root or nonroot (65532); the host's userland stands in
_DEBUG_ENV = (("PATH", DEFAULT_PATH + ":/busybox"), ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"))
DISTROLESS_DEBUG = {
    "debug": Image(entrypoint=("/busybox/sh",), env=_DEBUG_ENV, aliases={"/busybox/sh": "/bin/sh"}, size=1_800_000),
    "debug-nonroot": Image(
        entrypoint=("/busybox/sh",),
        env=_DEBUG_ENV,
        user=65532,
        workdir="/home/nonroot",
        passwd={0: "/root", 65532: "/home/nonroot", 65534: "/nonexistent"},
        aliases={"/busybox/sh": "/bin/sh"},
        size=1_800_000,
    ),
}


def repository(image: str) -> str:
    """`docker.io/library/busybox:1.36@sha256:…` -> `busybox`; `gcr.io/distroless/static:nonroot`
    -> `gcr.io/distroless/static`."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/library/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    return name


def lookup(image: str) -> Image:
    """The catalogue's entry: the longest key that is the repository or a path prefix of it."""
    repo = repository(image)
    best = ""
    for key in CATALOGUE:
        if (repo == key or repo.startswith(key + "/") or repo.endswith("/" + key)) and len(key) > len(best):
            best = key
    if not best:  # any other distroless or scratch-based name has no shell either
        best = next((k for k in ("gcr.io/distroless", "scratch") if k.rsplit("/", 1)[-1] in repo), "")
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    if best == "gcr.io/distroless" and tag in DISTROLESS_DEBUG:
        return DISTROLESS_DEBUG[tag]
    return CATALOGUE[best] if best else DEFAULT


def pull_policy(image: str, policy: str | None) -> str:
    """The apiserver's default imagePullPolicy: Always for `:latest` or no tag, else IfNotPresent."""
    if policy:
        return policy
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    tagged = ":" in last or "@" in image
    return "Always" if not tagged or last.endswith(":latest") else "IfNotPresent"


class NoCommand(Exception):
    """The runtime cannot make a process: containerd's `no command specified`."""


def process_args(img: Image, command: list[str], args: list[str]) -> list[str]:
    """The process's argv as containerd's CRI makes it (internal/cri/opts/spec_opts.go
    WithProcessArgs, from moby's daemon/commit.go): a container `command` replaces ENTRYPOINT and
    then only `args` follow (CMD is dropped); without a command, ENTRYPOINT + (`args` or CMD).
    `command`/`args` arrive already `$(VAR)`-expanded by the kubelet
    (pkg/kubelet/container/helpers.go ExpandContainerCommandAndArgs)."""
    if command:
        return list(command) + list(args)
    argv = list(img.entrypoint) + (list(args) if args else list(img.cmd))
    if not argv:
        raise NoCommand("no command specified")
    return argv


def lookup_error(name: str, root: str, path: str, img: Image) -> str | None:
    """runc's check before it execs the process (libcontainer/standard_init_linux.go:
    `exec.LookPath(l.config.Args[0])` inside the container): None when `name` is found, else
    Go's exec.Error text, e.g. `exec: "x": executable file not found in $PATH`."""
    if name in img.standins or name in img.aliases:
        return None
    if "/" in name:
        if not img.shell:
            return f'exec: "{name}": stat {name}: no such file or directory'
        p = os.path.join(root, name.lstrip("/"))
        if not os.path.exists(p):
            return f'exec: "{name}": stat {name}: no such file or directory'
        if os.path.isdir(p) or not os.access(p, os.X_OK):
            return f'exec: "{name}": permission denied'
        return None
    if img.shell:
        for d in path.split(":"):
            if not d:
                continue
            if d + "/" + name in img.standins:
                return None
            p = os.path.join(root, d.lstrip("/"), name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return None
    else:
        for d in path.split(":"):
            if d and d + "/" + name in img.standins:
                return None
    return f'exec: "{name}": executable file not found in $PATH'


def standin(argv: list[str], img: Image, path: str) -> list[str]:
    """argv, with an image program the host lacks replaced by what stands in for it (a server
    stand-in drops the arguments; an alias keeps them)."""
    name = argv[0]
    if name in img.aliases:
        return [img.aliases[name], *argv[1:]]
    if name in img.standins:
        return list(img.standins[name])
    if "/" not in name:
        for d in path.split(":"):
            if d and d + "/" + name in img.standins:
                return list(img.standins[d + "/" + name])
    return argv


def start_error(lookup_text: str) -> str:
    """The message of a container runc could not start, as containerd (1.7, runc 1.2) returns it
    and the kubelet records it: internal/cri/server/container_start.go wraps the task error,
    runc's libcontainer/process_linux.go adds `error during container init`."""
    return (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
        f"runc create failed: unable to start container process: error during container init: {lookup_text}: unknown"
    )


def home(img: Image, uid: int) -> str:
    """runc's HOME when the env has none: the user's home from the image's /etc/passwd, else `/`
    (libcontainer/init_linux.go: user.GetExecUserPath defaults Home to "/")."""
    return img.passwd.get(uid, "/")
