"""Status error bodies byte for byte as the apiserver writes them (compact JSON in metav1.Status's
field order, a trailing newline), and the `details` clients read: an object's NotFound names it;
a path nothing serves has empty details (apierrors.NewGenericServerResponse), which `kubectl
debug` reads as "ephemeral containers are disabled" rather than panicking on a nil pointer."""

from __future__ import annotations

import ssl

import httpx

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl


def _get(cluster: Cluster, path: str) -> httpx.Response:
    with httpx.Client(
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
    ) as http:
        return http.get(cluster.url + path)


def test_an_objects_not_found_is_the_apiservers_compact_status(cluster: Cluster) -> None:
    r = _get(cluster, "/apis/apps/v1/namespaces/default/deployments/nope")
    assert r.status_code == 404
    assert r.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"deployments.apps \\"nope\\" not found","reason":"NotFound",'
        b'"details":{"name":"nope","group":"apps","kind":"deployments"},"code":404}\n'
    )


def test_a_path_nothing_serves_is_a_404_with_empty_details(cluster: Cluster) -> None:
    r = _get(cluster, "/api/v1/namespaces/default/pods/solo/nosuchsubresource")
    assert r.status_code == 404
    assert r.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"the server could not find the requested resource","reason":"NotFound",'
        b'"details":{},"code":404}\n'
    )


def test_kubectl_debug_never_panics_on_the_ephemeral_containers_answer(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("run", "solo", "--image=debian", "--command", "--", "sleep", "infinity")
    kubectl("wait", "--for=condition=Ready", "pod/solo", "--timeout=60s")
    proc = kubectl.run("debug", "pod/solo", "--image=busybox", "--profile=general", "--", "true", check=False)
    assert "panic" not in proc.stderr and "goroutine" not in proc.stderr
    if proc.returncode != 0:  # until kubesim serves pods/ephemeralcontainers: kubectl's clean refusal
        assert proc.stderr.strip().splitlines()[-1] == (
            "error: ephemeral containers are disabled for this cluster "
            '(error from server: "the server could not find the requested resource")'
        )
