"""kubesim pod networking, judged by the real kubectl, the official Python client and httpx:
one network namespace per pod, the API server's pod and service proxy, Services and their
Endpoints/EndpointSlices, and the second seed's trap (a green Service /health while one pod
lacks FEATURE_CREDENTIAL)."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.kubesim import Cluster, Rule
from tests.support.helpers import deployment, http_app_container, http_app_deployment, secret, service
from tests.support.kubectl import Kubectl

PROXY = "/api/v1/namespaces/default/pods/{pod}/proxy{path}"
SVC_PROXY = "/api/v1/namespaces/default/services/{svc}/proxy{path}"


@pytest.fixture
def http(cluster: Cluster) -> Iterator[httpx.Client]:
    """httpx as rollout-verify's --expect-http uses it: the kubeconfig's bearer token and CA."""
    with httpx.Client(
        base_url=cluster.url,
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
        timeout=30,
    ) as c:
        yield c


def pods_of(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.list("Pod")
        if (p["metadata"].get("labels") or {}).get("app") == app
        and not p["metadata"].get("deletionTimestamp")
    ]


def wait_serving(cluster: Cluster, http: httpx.Client, pods: list[str], port: int = 8080) -> None:
    """Until each pod's app answers /health through the pod proxy (it binds after it starts)."""
    for pod in pods:
        cluster.wait_for(
            lambda pod=pod: http.get(PROXY.format(pod=f"{pod}:{port}", path="/health")).status_code == 200,
            what=f"{pod} serving on {port}",
        )


def deploy_app(cluster: Cluster, http: httpx.Client, name: str, replicas: int = 2, **kw: Any) -> list[str]:
    cluster.apply(http_app_deployment(name, replicas=replicas, **kw))
    cluster.wait_rollout(name)
    pods = sorted(p["metadata"]["name"] for p in pods_of(cluster, name))
    assert len(pods) == replicas
    # the readinessProbe on /health passed before the pods counted as available
    for pod in pods:
        assert http.get(PROXY.format(pod=f"{pod}:8080", path="/health")).status_code == 200
    return pods


def test_kubectl_get_raw_through_the_pod_proxy_returns_the_apps_body(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    pods = deploy_app(cluster, http, "web", replicas=1)
    cluster.reset_counts()
    out = kubectl("get", "--raw", PROXY.format(pod=f"{pods[0]}:8080", path="/health"))
    assert out == "ok\n"
    # without a port the apiserver uses the first declared container port
    assert kubectl("get", "--raw", PROXY.format(pod=pods[0], path="/health")) == "ok\n"
    # scheme:name:port form
    assert kubectl("get", "--raw", PROXY.format(pod=f"http:{pods[0]}:8080", path="/health")) == "ok\n"
    assert cluster.requests[("get", "pods/proxy")] == 3
    # no path: the apiserver redirects to the same URL with a trailing slash
    r = http.get(PROXY.format(pod=f"{pods[0]}:8080", path=""), follow_redirects=False)
    assert r.status_code == 301
    assert r.headers["Location"] == f"/api/v1/namespaces/default/pods/{pods[0]}:8080/proxy/"


def test_pod_proxy_forwards_method_query_and_body_but_never_the_bearer_token(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client, tmp_path: Path
) -> None:
    (pod,) = deploy_app(cluster, http, "echo", replicas=1)
    r = http.post(
        PROXY.format(pod=f"{pod}:8080", path="/echo") + "?a=1&b=two%20words&a=3",
        content=b'{"hello": "world"}\n',
        headers={"Content-Type": "application/json", "X-Test": "kept"},
    )
    assert r.status_code == 200
    got = r.json()
    assert got["method"] == "POST"
    assert got["path"] == "/echo"
    assert got["raw_query"] == "a=1&b=two%20words&a=3"
    assert got["query"] == {"a": ["1", "3"], "b": ["two words"]}
    assert got["body"] == '{"hello": "world"}\n'
    headers = {k.lower(): v for k, v in got["headers"].items()}
    assert headers["x-test"] == "kept"
    assert headers["content-type"] == "application/json"
    assert headers["x-forwarded-uri"] == f"/api/v1/namespaces/default/pods/{pod}:8080/proxy/echo"
    assert "authorization" not in headers  # the apiserver drops it once it has authenticated
    assert cluster.admin_token not in r.text
    for method in ("PUT", "DELETE"):
        assert http.request(method, PROXY.format(pod=f"{pod}:8080", path="/echo")).json()["method"] == method

    # kubectl create --raw POSTs a file's content, query string included
    body = tmp_path / "body.txt"
    body.write_text("from kubectl")
    out = json.loads(
        kubectl(
            "create", "--raw", PROXY.format(pod=f"{pod}:8080", path="/echo") + "?via=kubectl", "-f", str(body)
        )
    )
    assert (out["method"], out["body"], out["query"]) == ("POST", "from kubectl", {"via": ["kubectl"]})


def test_two_pods_listening_on_the_same_port_answer_independently(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    pods = deploy_app(cluster, http, "twin", replicas=2)
    ips = {p["metadata"]["name"]: p["status"]["podIP"] for p in pods_of(cluster, "twin")}
    assert len(set(ips.values())) == 2
    for pod in pods:
        report = json.loads(kubectl("get", "--raw", PROXY.format(pod=f"{pod}:8080", path="/config")))
        assert report["pod"] == pod  # each answer comes from the pod that was asked
        # the pod's eth0 holds status.podIP, and its own app answers on it
        addrs = kubectl("exec", pod, "--", "ip", "-4", "-o", "addr", "show", "dev", "eth0")
        assert f"inet {ips[pod]}/32" in addrs
        echoed = kubectl("exec", pod, "--", "wget", "-qO-", f"http://{ips[pod]}:8080/echo")
        assert json.loads(echoed)["pod"] == pod
    # the other pod's IP is not routable from here: pods are isolated from each other
    a, b = pods
    proc = kubectl.run(
        "exec", a, "--", "wget", "-qO-", "-T", "2", f"http://{ips[b]}:8080/health", check=False
    )
    assert proc.returncode != 0


def test_containers_of_a_pod_share_localhost_and_other_pods_do_not_see_it(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    sidecar = {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "duo", "namespace": "default"},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [http_app_container(), sidecar]},
        }
    )
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "lonely", "namespace": "default"},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [sidecar]},
        }
    )
    kubectl("wait", "--for=condition=Ready", "pod/duo", "pod/lonely", "--timeout=60s")
    wait_serving(cluster, http, ["duo"])
    out = kubectl("exec", "duo", "-c", "sidecar", "--", "sh", "-c", "wget -qO- http://127.0.0.1:8080/health")
    assert out == "ok\n"
    out = kubectl("exec", "duo", "-c", "app", "--", "sh", "-c", "wget -qO- http://localhost:8080/health")
    assert out == "ok\n"
    # another pod's localhost is its own: nothing listens on 8080 there
    proc = kubectl.run(
        "exec", "lonely", "--", "wget", "-O-", "-T", "2", "http://127.0.0.1:8080/health", check=False
    )
    assert proc.returncode == 4  # wget: network failure
    assert "Connection refused" in proc.stderr


def test_pod_proxy_errors_carry_the_apiserver_texts(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    (pod,) = deploy_app(cluster, http, "err", replicas=1)
    ip = pods_of(cluster, "err")[0]["status"]["podIP"]

    proc = kubectl.run("get", "--raw", PROXY.format(pod="nope:8080", path="/health"), check=False)
    assert proc.returncode != 0
    assert 'Error from server (NotFound): pods "nope" not found' in proc.stderr
    r = http.get(PROXY.format(pod="nope:8080", path="/health"))
    assert (r.status_code, r.json()["reason"]) == (404, "NotFound")

    # nothing listening on the port: the apiserver's dial fails
    msg = f"error trying to reach service: dial tcp {ip}:9999: connect: connection refused"
    proc = kubectl.run("get", "--raw", PROXY.format(pod=f"{pod}:9999", path="/health"), check=False)
    assert proc.returncode != 0
    assert f"Error from server (ServiceUnavailable): {msg}" in proc.stderr
    r = http.get(PROXY.format(pod=f"{pod}:9999", path="/health"))
    assert r.status_code == 503
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": msg,
        "reason": "ServiceUnavailable",
        "code": 503,
    }

    # the apiserver dials the pod IP: an app bound to the pod's localhost only is unreachable
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "local-only", "namespace": "default"},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                # no readinessProbe: the kubelet's probe dials the pod IP too, so it would never pass
                "containers": [
                    http_app_container(env=[{"name": "BIND_ADDRESS", "value": "127.0.0.1"}], readiness=False)
                ],
            },
        }
    )
    kubectl("wait", "--for=condition=Ready", "pod/local-only", "--timeout=60s")
    cluster.wait_for(
        lambda: kubectl.run(
            "exec", "local-only", "--", "wget", "-qO-", "http://127.0.0.1:8080/health", check=False
        ).stdout.startswith("ok"),
        what="local-only listening",
    )
    r = http.get(PROXY.format(pod="local-only:8080", path="/health"))
    assert r.status_code == 503 and "connect: connection refused" in r.json()["message"]

    # a pod with no IP yet (unschedulable): the real 400
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "nowhere", "namespace": "default"},
            "spec": {"nodeSelector": {"no": "such-node"}, "containers": [http_app_container()]},
        }
    )
    r = http.get(PROXY.format(pod="nowhere:8080", path="/health"))
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        400,
        "BadRequest",
        "address not allowed",
    )
    r = http.get(PROXY.format(pod="a:b:c:d", path="/health"))
    assert (r.status_code, r.json()["message"]) == (400, 'invalid pod request "a:b:c:d"')


def test_pod_proxy_is_authorized_as_the_pods_proxy_subresource(
    cluster: Cluster, http: httpx.Client, tmp_path: Path
) -> None:
    (pod,) = deploy_app(cluster, http, "authz", replicas=1)
    viewer = cluster.add_user("viewer", [Rule.of(["get", "list", "watch"], "pods")])
    prober = cluster.add_user("prober", [Rule.of("get", "pods/proxy")])
    url = PROXY.format(pod=f"{pod}:8080", path="/health")

    r = http.get(url, headers={"Authorization": f"Bearer {viewer}"})
    assert r.status_code == 403
    assert r.json()["reason"] == "Forbidden"
    assert r.json()["message"] == (
        f'pods "{pod}:8080" is forbidden: User "viewer" cannot get resource "pods/proxy" '
        'in API group "" in the namespace "default"'
    )
    r = http.get(url, headers={"Authorization": f"Bearer {prober}"})
    assert (r.status_code, r.text) == (200, "ok\n")
    r = http.post(url, headers={"Authorization": f"Bearer {prober}"}, content=b"x")
    assert r.status_code == 403
    assert 'User "prober" cannot create resource "pods/proxy"' in r.json()["message"]

    # a service account bound by a real Role, through kubectl
    cluster.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "proxy", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["get"]}],
        }
    )
    cluster.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "proxy", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "proxy"},
            "subjects": [{"kind": "ServiceAccount", "name": "verify", "namespace": "default"}],
        }
    )
    sa = Kubectl(
        cluster.write_kubeconfig(
            tmp_path / "sa.kubeconfig", token=cluster.serviceaccount_token("default", "verify")
        ),
        tmp_path,
    )
    assert sa("get", "--raw", url) == "ok\n"
    proc = sa.run("get", "--raw", SVC_PROXY.format(svc="authz:80", path="/health"), check=False)
    assert proc.returncode != 0
    assert (
        'services "authz:80" is forbidden: User "system:serviceaccount:default:verify" cannot get '
        'resource "services/proxy" in API group "" in the namespace "default"'
    ) in proc.stderr


def test_official_python_client_reaches_pods_and_services_through_the_proxy(
    cluster: Cluster, kubeconfig: str, http: httpx.Client
) -> None:
    pods = deploy_app(cluster, http, "py", replicas=2)
    cluster.apply(service("py"))
    api = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=kubeconfig))
    try:
        for pod in pods:
            # raw bytes: the client would str() a JSON body it decoded itself
            resp = api.connect_get_namespaced_pod_proxy_with_path(
                f"{pod}:8080", "default", "config", _preload_content=False
            )
            assert resp.status == 200 and json.loads(resp.data)["pod"] == pod
        cluster.wait_for(lambda: bool(cluster.get("Endpoints", "py").get("subsets")), what="endpoints of py")
        # raw bytes here too: kubernetes 36 str()s the bytes of a `str` response (b'ok\\n'; fixed in 37)
        health = api.connect_get_namespaced_service_proxy_with_path(
            "py:80", "default", "health", _preload_content=False
        )
        assert health.status == 200 and health.data == b"ok\n"
        eps = api.read_namespaced_endpoints("py", "default")
        assert sorted(a.target_ref.name for a in eps.subsets[0].addresses) == pods
        svcs = {s.metadata.name: s for s in api.list_namespaced_service("default").items}
        assert svcs["kubernetes"].spec.cluster_ip == "10.96.0.1"
        assert svcs["py"].spec.ports[0].target_port == "http"
        slices = k8s.DiscoveryV1Api(api.api_client).list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=py"
        )
        assert sorted(e.target_ref.name for e in slices.items[0].endpoints) == pods
    finally:
        api.api_client.close()


def test_services_print_apply_and_list_ready_pods_as_endpoints(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    pods = deploy_app(cluster, http, "shop", replicas=2)
    ips = sorted(p["status"]["podIP"] for p in pods_of(cluster, "shop"))
    manifest = json.dumps(service("shop"))
    assert kubectl("apply", "-f", "-", input=manifest).strip() == "service/shop created"
    svc = json.loads(kubectl("get", "svc", "shop", "-o", "json"))
    cluster_ip = svc["spec"]["clusterIP"]
    assert cluster_ip.startswith("10.96.") and svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["ports"] == [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}]

    rows = {line.split()[0]: line.split() for line in kubectl("get", "svc").splitlines()[1:]}
    assert rows["kubernetes"][1:5] == ["ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    lines = kubectl("get", "svc", "shop", "-o", "wide").splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    row = lines[1].split()
    assert row[:5] == ["shop", "ClusterIP", cluster_ip, "<none>", "80/TCP"] and row[6] == "app=shop"

    want = ",".join(f"{ip}:8080" for ip in ips)
    cluster.wait_for(lambda: want in kubectl("get", "endpoints", "shop"), what="endpoints of shop")
    assert want in kubectl("describe", "svc", "shop")  # kubectl reads the EndpointSlices
    slices = json.loads(
        kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=shop", "-o", "json")
    )
    (sl,) = slices["items"]
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert sorted(e["addresses"][0] for e in sl["endpoints"]) == ips

    # apply again with a changed port: merged on `port`, the clusterIP is kept
    changed = manifest.replace('"port": 80', '"port": 8000')
    assert kubectl("apply", "-f", "-", input=changed).strip() == "service/shop configured"
    svc = json.loads(kubectl("get", "svc", "shop", "-o", "json"))
    assert [p["port"] for p in svc["spec"]["ports"]] == [8000]
    assert svc["spec"]["clusterIP"] == cluster_ip

    # a pod going away leaves the endpoints
    kubectl("delete", "pod", pods[0], "--wait=false")
    cluster.wait_for(
        lambda: pods[0] not in json.dumps(cluster.get("Endpoints", "shop")),
        what="endpoints without the deleted pod",
    )
    kubectl("delete", "svc", "shop")
    cluster.wait_for(
        lambda: cluster.get("Endpoints", "shop") is None, what="endpoints removed with the service"
    )
    cluster.wait_for(
        lambda: not [s for s in cluster.list("EndpointSlice") if s["metadata"]["name"].startswith("shop-")],
        what="endpointslices removed with the service",
    )

    # kubectl expose builds a Service from the Deployment's selector
    assert "service/shop2 exposed" in kubectl(
        "expose", "deployment", "shop", "--name", "shop2", "--port", "81", "--target-port", "8080"
    )
    cluster.wait_for(
        lambda: bool((cluster.get("Endpoints", "shop2") or {}).get("subsets")), what="shop2 endpoints"
    )
    assert kubectl("get", "--raw", SVC_PROXY.format(svc="shop2:81", path="/health")) == "ok\n"


def test_service_proxy_errors_carry_the_apiserver_texts(cluster: Cluster, http: httpx.Client) -> None:
    cluster.apply(service("empty"))
    r = http.get(SVC_PROXY.format(svc="empty:80", path="/health"))
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        503,
        "ServiceUnavailable",
        'no endpoints available for service "empty"',
    )
    r = http.get(SVC_PROXY.format(svc="empty:81", path="/health"))
    assert (r.status_code, r.json()["message"]) == (503, 'no service port 81 found for service "empty"')
    r = http.get(SVC_PROXY.format(svc="ghost:80", path="/health"))
    assert (r.status_code, r.json()["message"]) == (404, 'services "ghost" not found')
    # by port name the apiserver goes straight to the Endpoints object
    r = http.get(SVC_PROXY.format(svc="ghost:http", path="/health"))
    assert (r.status_code, r.json()["message"]) == (404, 'endpoints "ghost" not found')
    r = http.post("/api/v1/namespaces/default/services", json={"metadata": {"name": "bad"}, "spec": {}})
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Service "bad" is invalid: spec.ports: Required value',
    )


def test_seed_trap_service_health_stays_green_while_one_pod_lacks_the_credential(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    """The second seed: Helm created the Deployment before the CSI driver synced the Secret, so
    the first pod started without FEATURE_CREDENTIAL; a pod started later has it. Every call to
    the Service's /health is 200 (both pods behind it answer), while asking each pod /config
    shows exactly one without the credential."""
    value = "feature-credential-s3cr3t"
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://db/web"}))
    (early,) = deploy_app(
        cluster,
        http,
        "web",
        replicas=1,
        required_env=["FEATURE_CREDENTIAL", "DB_URL"],
        env_from=[{"secretRef": {"name": "web-secrets"}}],
    )
    cluster.apply(service("web"))
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://db/web", "FEATURE_CREDENTIAL": value}))
    kubectl("scale", "deployment", "web", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    pods = sorted(p["metadata"]["name"] for p in pods_of(cluster, "web"))
    (late,) = set(pods) - {early}
    wait_serving(cluster, http, pods)
    cluster.wait_for(
        lambda: (
            len((cluster.get("Endpoints", "web") or {}).get("subsets", [{}])[0].get("addresses", [])) == 2
        ),
        what="both pods behind the service",
    )

    # what a load-balancer check sees: always healthy
    statuses = [http.get(SVC_PROXY.format(svc="web:80", path="/health")).status_code for _ in range(40)]
    assert statuses == [200] * 40
    assert kubectl("get", "--raw", SVC_PROXY.format(svc="web:http", path="/health")) == "ok\n"
    # ... and the checks did land on both pods, the broken one included
    for pod in pods:
        assert "GET /health 200" in kubectl("logs", pod)

    # what a per-pod check sees
    reports = {}
    for pod in pods:
        r = http.get(PROXY.format(pod=f"{pod}:8080", path="/config"))
        reports[pod] = (r.status_code, r.json())
        assert value not in r.text
    assert reports[early][0] == 503
    assert reports[early][1]["feature_credential"] is False
    assert reports[early][1]["missing"] == ["FEATURE_CREDENTIAL"]
    assert reports[late][0] == 200
    assert reports[late][1]["feature_credential"] is True
    assert [p for p, (_, rep) in reports.items() if not rep["feature_credential"]] == [early]
    good = json.loads(kubectl("get", "--raw", PROXY.format(pod=f"{late}:8080", path="/config")))
    assert good["missing"] == [] and good["pod"] == late


def test_readiness_probes_gate_pod_ready_and_the_services_endpoints(
    cluster: Cluster, kubectl: Kubectl, http: httpx.Client
) -> None:
    def pod(name: str, labels: dict[str, str], container: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
        }

    cluster.apply(pod("fine", {"role": "probed"}, http_app_container()))
    cluster.apply(
        pod("sick", {"role": "probed"}, http_app_container(env=[{"name": "HEALTH_STATUS", "value": "500"}]))
    )
    gate = {
        "name": "app",
        "image": "busybox:1.36",
        "command": ["sleep", "3600"],
        "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1},
    }
    cluster.apply(pod("gated", {"role": "gated"}, gate))
    cluster.apply(service("probed", selector={"role": "probed"}))
    kubectl("wait", "--for=condition=Ready", "pod/fine", "--timeout=60s")
    ips = {p["metadata"]["name"]: p["status"].get("podIP") for p in cluster.list("Pod")}

    # /health answers 500 on "sick": running, never Ready, listed as a not-ready address
    cluster.wait_for(
        lambda: (cluster.get("Endpoints", "probed") or {}).get("subsets", [{}])[0].get("notReadyAddresses"),
        what="sick pod listed as not ready",
    )
    (subset,) = cluster.get("Endpoints", "probed")["subsets"]
    assert [a["ip"] for a in subset["addresses"]] == [ips["fine"]]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == [ips["sick"]]
    row = kubectl("get", "pod", "sick", "--no-headers").split()
    assert row[1:3] == ["0/1", "Running"]
    sick = cluster.get("Pod", "sick")
    ready = next(c for c in sick["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["message"]) == ("False", "containers with unready status: [app]")
    # the Service proxy only ever picks the ready pod
    answers = {http.get(SVC_PROXY.format(svc="probed:80", path="/echo")).json()["pod"] for _ in range(12)}
    assert answers == {"fine"}

    # an exec probe: Ready once the file it reads exists
    kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/gated", "--timeout=60s")
    assert (
        kubectl.run("wait", "--for=condition=Ready", "pod/gated", "--timeout=2s", check=False).returncode != 0
    )
    kubectl("exec", "gated", "--", "touch", "/tmp/ready")
    kubectl("wait", "--for=condition=Ready", "pod/gated", "--timeout=30s")


def test_endpoints_print_three_addresses_then_how_many_more(cluster: Cluster, kubectl: Kubectl) -> None:
    d = deployment("many", replicas=4)
    d["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    cluster.apply(d)
    cluster.apply(service("many"))
    cluster.wait_rollout("many")
    ips = sorted(
        (p["status"]["podIP"] for p in pods_of(cluster, "many")),
        key=lambda ip: tuple(map(int, ip.split("."))),
    )
    cluster.wait_for(
        lambda: (
            len((cluster.get("Endpoints", "many") or {}).get("subsets", [{}])[0].get("addresses", [])) == 4
        ),
        what="four endpoints",
    )
    row = kubectl("get", "endpoints", "many", "--no-headers").split()
    assert row[1] == ",".join(f"{ip}:8080" for ip in ips[:3])
    assert row[2:5] == ["+", "1", "more..."]
    (line,) = kubectl(
        "get", "endpointslices", "-l", "kubernetes.io/service-name=many", "--no-headers"
    ).splitlines()
    cells = line.split()
    assert cells[1:4] == ["IPv4", "8080", ",".join(ips[:3])] and cells[4:7] == ["+", "1", "more..."]
