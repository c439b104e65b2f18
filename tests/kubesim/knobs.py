"""How a cluster behaves (Knobs), the faults a test injects (Fault), and the request counters."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Knobs:
    api_latency: float = 0.0
    # An exec's round trip: nothing reaches the client before it has passed. The command runs
    # within it (as on a real node, where the round trip and the command overlap from the
    # client's side), or only after it with `exec_command_after_latency` (the bench shows both:
    # here the command's CPU is the client's own machine's).
    exec_latency: float = 0.0
    exec_command_after_latency: bool = False
    pod_start_delay: float = 0.0
    sync_period: float = 60.0  # kubelet configMap/secret volume refresh
    # a failed volume mount is retried after 0.5 s, doubling up to this (the kubelet's 2m2s)
    mount_backoff_max: float = 122.0
    # the Secrets Store CSI Driver's --enable-secret-rotation and --rotation-poll-interval (2 m)
    secrets_store_rotation: bool = False
    rotation_poll_interval: float = 120.0
    # seconds between a mount and the driver's sync controller creating its secretObjects Secrets
    # (a separate controller on a real node: containers may start first); 0: within the mount
    secret_sync_delay: float = 0.0
    # Watches and lists (storage/history.py). The watch cache keeps per resource type at least
    # `watch_cache_size` events and every event younger than `watch_cache_fresh` seconds
    # (upstream cacher/watch_cache_history.go: 100 and 75 s); a watch from before that window is
    # 410 Expired. etcd keeps a superseded revision for `etcd_compaction_interval` seconds
    # (kube-apiserver --etcd-compaction-interval 5m) for lists at an exact resourceVersion and
    # continue tokens, 410 after. BOOKMARK events every `bookmark_interval` seconds (cacher.go
    # defaultBookmarkFrequency, 1 min) and 2 s before a watch's timeoutSeconds, as upstream
    watch_cache_size: int = 100
    watch_cache_fresh: float = 75.0
    etcd_compaction_interval: float = 300.0
    bookmark_interval: float = 60.0
    watch_drop_after: int | None = None  # abort the next watch stream after N events
    # Seeded random faults on every API request (REST, watches and exec upgrades alike): each
    # request is answered with one of `fault_mix` instead of being served with probability
    # `fault_rate`. The draw hashes (seed, method, path, how often that path was asked), so the
    # same request sequence meets the same faults whatever the thread interleaving.
    # Kinds: "500", "503", "429" (Retry-After: 1), "reset" (connection aborted), "403" (the
    # warming-up apiserver's `... is forbidden: not yet ready to handle request`).
    fault_rate: float = 0.0
    fault_seed: int = 0
    fault_mix: tuple[str, ...] = ("500", "503", "429", "reset")
    exec_hang: set[str] = field(default_factory=set)  # pods whose execs upgrade, then never answer
    # pods whose next exec finds its container not running (a crash between list and exec): the
    # kubelet refuses it as it does any container that is not running
    exec_not_running: set[str] = field(default_factory=set)
    # pods whose exec requests are held without any answer, not even the upgrade (a kubelet that
    # accepted the stream and wedged)
    exec_hang_upgrade: set[str] = field(default_factory=set)
    # pods force-deleted (grace 0, as `kubectl delete --force`) while their next exec runs
    delete_during_exec: set[str] = field(default_factory=set)
    # pods force-deleted as their next pods/proxy request arrives
    delete_during_proxy: set[str] = field(default_factory=set)
    # Kubernetes 1.35's AuthorizePodWebsocketUpgradeCreatePermission (on by default there): a
    # WebSocket exec, authorised as `get pods/exec`, also needs `create pods/exec`. On here, so
    # tests meet both denials; off is what clusters before 1.35 do
    websocket_exec_needs_create: bool = True
    # a mutating admission webhook (a policy engine) stamping every Deployment template written
    # through the API: the stored template is never exactly the one the client sent
    mutating_webhook: bool = False
    # authorization.k8s.io (SelfSubjectAccessReview, SelfSubjectRulesReview) served and listed in
    # discovery; off, a server without it (404), as a client meets behind a proxy that only
    # forwards resource APIs
    access_reviews: bool = True
    # the kubelet's restart back-off (CrashLoopBackOff) and image-pull back-off: 10 s doubling to
    # 5 min, as a real kubelet; a test may shorten both (the first restart is always at once)
    crashloop_backoff_initial: float = 10.0
    crashloop_backoff_max: float = 300.0
    # the Job controller's pod failure back-off: a failed pod is replaced after this, doubling
    # per failure up to 10 minutes (DefaultJobPodFailureBackOff, 10 s on a real cluster)
    job_backoff: float = 10.0
    # Image pulls (node/registry.py): kubesim's registries hold the images of images.PUBLISHED;
    # a host listed in `registries` is reachable and holds every repository and tag asked of it
    # (a test's private registry); any other host fails its DNS lookup. Images whose name holds
    # one of `bad_image_markers` are missing wherever they are. `node_images` are on every node
    # at boot (as `kind load docker-image` puts them), for imagePullPolicy Never
    registries: tuple[str, ...] = ()
    node_images: tuple[str, ...] = ()
    bad_image_markers: tuple[str, ...] = ("doesnotexist", "no-such-image")
    # a fault: an image whose process, whatever it is asked to run, fails at once (exit 1)
    crash_image_markers: tuple[str, ...] = ("crashloop",)
    # each node's capacity (= allocatable), which the scheduler's NodeResourcesFit counts pod
    # requests and pods against: the kubelet's --max-pods is 110 by default, as upstream; a test
    # or benchmark that packs more pods onto a node raises it (or adds nodes)
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    max_pods: int = 110
    proxy_timeout: float = 30.0  # pods/proxy and services/proxy: dial + response
    # an EKS cluster of this name: bearer tokens `k8s-aws-v1.…` presigned by the test identities of
    # apiserver/eks.py authenticate (their SigV4 signature checked by kubesim itself, never by AWS)
    eks_cluster_name: str | None = None
    # a GKE cluster in this Google project: kubesim also serves the Google endpoints its
    # credentials use (apiserver/gke.py: STS, IAM generateAccessToken, OAuth2, GitHub's OIDC
    # token URL) on a loopback HTTPS port of their own, and the access tokens they issue authenticate
    gke_project: str | None = None
    # an AKS cluster whose Entra server application is this id: kubesim's port also serves its
    # Microsoft Entra ID (apiserver/entra.py: OpenID discovery, the token endpoint, App Service's
    # managed identity and GitHub's ID token endpoints), whose access tokens for this id authenticate
    aks_server_id: str | None = None
    # The kinds every cluster serves (controllers/cronjob.py, podautoscaler.py, disruption.py,
    # node/lease.py): cron seconds that pass per second (60: a `*/1 * * * *` CronJob fires every
    # second, its Jobs named and stamped in that clock), the HPA controller's sync period (15 s,
    # --horizontal-pod-autoscaler-sync-period) and the kubelet's node Lease renewal (10 s)
    cron_speed: float = 1.0
    hpa_sync_period: float = 15.0
    node_lease_renew: float = 10.0
    # the kube-system pods a kind cluster runs (coredns, etcd, kube-apiserver, kube-controller-
    # manager, kube-scheduler, kube-proxy, kindnet: controllers/systempods.py); off in tests by
    # default (each costs a sandbox and a process), on in `python -m tests.kubesim serve`
    system_pods: bool = False


@dataclass
class Fault:
    # "status" | "reset" (dropped unserved) | "reset-after" (served, then dropped before the
    # answer) | "expired" (a watch answered with the 410 ERROR event) | "watch-error" (a watch
    # answered with an ERROR event of `status`, as etcd's leader change sends 500) |
    # "upgrade-broken" (an exec's upgrade answered 101 with a wrong Sec-WebSocket-Accept, then
    # closed) | "upgrade-ignored" (a proxy that does not pass WebSocket upgrades: 200 and a page)
    kind: str
    status: int = 500
    retry_after: int = 1
    match: str = ""  # regex on "VERB resource" (e.g. "list pods") or the path
    method: str = ""
    times: int = 1
    message: str = ""  # the Status message instead of the code's usual one
    # who answers a "status" fault: "apiserver" (its JSON Status), "proxy" (a proxy in front of
    # it: nginx's HTML error page) or "kubelet" (an exec's stream refused as the kubelet's
    # streaming.WriteError does, passed on by the apiserver: plain text on v4, the error channel
    # on v5)
    via: str = "apiserver"


@dataclass
class Requests:
    """Request counts by (verb, resource[/sub]), e.g. ("create", "pods/exec")."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)

    def __getitem__(self, key: tuple[str, str]) -> int:
        return self.counts[key]

    def total(self) -> int:
        return sum(self.counts.values())
