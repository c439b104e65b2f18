"""kubesim's self-reviews and token requests, judged by the real kubectl (`auth can-i`, `auth can-i
--list`, `auth whoami`, `create token`, and the imperative `create serviceaccount|role|rolebinding`
that send protobuf) and by the official Python client."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import httpx
import pytest
from kubernetes import client
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import deployment
from tests.support.kubectl import Kubectl

SA = "system:serviceaccount:default:verifier"


def least_privilege(kubectl: Kubectl) -> None:
    """A ServiceAccount allowed to read and watch `web`, list pods and replicasets and `get` (not
    `create`) pods/exec, and to patch only the Deployment `other`: with kubectl's typed commands."""
    kubectl("create", "serviceaccount", "verifier")
    kubectl(
        "create", "role", "verifier", "--verb=get,watch", "--resource=deployments.apps", "--resource-name=web"
    )
    kubectl("create", "role", "lister", "--verb=list", "--resource=pods,replicasets.apps")
    kubectl("create", "role", "exec-get", "--verb=get", "--resource=pods/exec")
    kubectl(
        "create", "role", "patcher", "--verb=patch", "--resource=deployments.apps", "--resource-name=other"
    )
    for role in ("verifier", "lister", "exec-get", "patcher"):
        kubectl("create", "rolebinding", role, f"--role={role}", "--serviceaccount=default:verifier")


def sa_kubectl(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path, sa: str = "verifier"
) -> tuple[Kubectl, str]:
    """kubectl as the ServiceAccount, with a token from `kubectl create token`."""
    token = kubectl("create", "token", sa)
    assert token.count(".") == 2 and "\n" not in token  # a JWT, printed bare when not on a terminal
    kc = cluster.write_kubeconfig(tmp_path / f"{sa}.kubeconfig", token=token, user=sa)
    home = tmp_path / f"{sa}-home"
    home.mkdir(exist_ok=True)
    return Kubectl(kc, home), token


def can_i(kubectl: Kubectl, *args: str) -> tuple[int, str]:
    proc = kubectl.run("auth", "can-i", *args, check=False)
    return proc.returncode, proc.stdout.strip()


def test_can_i_answers_from_rbac_objects_for_a_token_from_create_token(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    sa, _ = sa_kubectl(cluster, kubectl, tmp_path)
    yes, no = (0, "yes"), (1, "no")
    assert can_i(sa, "get", "deployments.apps/web") == yes
    assert can_i(sa, "watch", "deployments/web") == yes
    assert can_i(sa, "get", "deployments.apps/other") == no  # resourceNames: web only
    assert can_i(sa, "list", "pods") == yes
    assert can_i(sa, "list", "replicasets.apps") == yes
    assert can_i(sa, "get", "pods", "--subresource=exec") == yes
    assert can_i(sa, "create", "pods", "--subresource=exec") == no
    assert can_i(sa, "patch", "deployments.apps/web") == no
    assert can_i(sa, "patch", "deployments.apps/other") == yes
    assert can_i(sa, "list", "pods", "-n", "kube-system") == no  # the RoleBindings are in default
    assert can_i(sa, "create", "serviceaccounts", "--subresource=token") == no
    assert can_i(sa, "create", "selfsubjectaccessreviews.authorization.k8s.io") == yes
    assert can_i(sa, "get", "/healthz") == yes  # system:discovery and public-info-viewer
    assert can_i(sa, "get", "/logs") == no
    # the admin may do anything, the subresource and names included
    assert can_i(kubectl, "create", "pods", "--subresource=exec") == yes
    assert can_i(kubectl, "patch", "deployments.apps/web") == yes
    assert can_i(kubectl, "get", "/logs") == yes
    # -q answers by the exit code only
    assert sa.run("auth", "can-i", "create", "pods", "--subresource=exec", "-q", check=False).returncode == 1


def test_a_list_or_watch_narrowed_to_one_name_is_authorised_for_that_name(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    """As the apiserver's RequestInfo: `fieldSelector=metadata.name=web` makes a list or watch a
    request for `web`, which a Role's resourceNames can grant (and can-i agrees)."""
    least_privilege(kubectl)
    kubectl("apply", "-f", "-", input=json.dumps(deployment("web", replicas=1)))
    sa, token = sa_kubectl(cluster, kubectl, tmp_path)
    assert can_i(sa, "watch", "deployments.apps/web") == (0, "yes")
    assert can_i(sa, "watch", "deployments.apps") == (1, "no")
    with httpx.Client(
        base_url=cluster.url,
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ) as http:
        path = "/apis/apps/v1/namespaces/default/deployments"
        one = {"watch": "1", "fieldSelector": "metadata.name=web", "timeoutSeconds": "1"}
        assert http.get(path, params=one).status_code == 200
        r = http.get(path, params={**one, "fieldSelector": "metadata.name=other"})
        assert (r.status_code, r.json()["message"]) == (
            403,
            f'deployments.apps "other" is forbidden: User "{SA}" cannot watch resource "deployments" in API '
            'group "apps" in the namespace "default"',
        )
        r = http.get(path, params={"watch": "1", "timeoutSeconds": "1"})
        assert (r.status_code, r.json()["message"]) == (
            403,
            f'deployments.apps is forbidden: User "{SA}" cannot watch resource "deployments" in API group "apps" '
            'in the namespace "default"',
        )


def test_can_i_list_shows_the_rules_of_the_namespace(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    sa, _ = sa_kubectl(cluster, kubectl, tmp_path)
    rows = [line.split() for line in sa("auth", "can-i", "--list").splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["deployments.apps", "[]", "[web]", "[get", "watch]"] in rows
    assert ["deployments.apps", "[]", "[other]", "[patch]"] in rows
    assert ["pods", "[]", "[]", "[list]"] in rows
    assert ["replicasets.apps", "[]", "[]", "[list]"] in rows
    assert ["pods/exec", "[]", "[]", "[get]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/healthz]", "[]", "[get]"] in rows
    assert ["[/openid/v1/jwks]", "[]", "[get]"] in rows  # system:service-account-issuer-discovery
    # another namespace: only what every authenticated user has
    other = sa("auth", "can-i", "--list", "-n", "kube-system")
    assert "pods" not in other.split() and "selfsubjectrulesreviews.authorization.k8s.io" in other
    admin = [line.split() for line in kubectl("auth", "can-i", "--list").splitlines()]
    assert ["*.*", "[]", "[]", "[*]"] in admin and ["[*]", "[]", "[*]"] in admin


def test_whoami_for_the_admin_and_for_a_created_token(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    rows = [line.split(None, 1) for line in kubectl("auth", "whoami").splitlines()]
    assert rows == [
        ["ATTRIBUTE", "VALUE"],
        ["Username", "kubernetes-admin"],
        ["Groups", "[system:masters system:authenticated]"],
    ]
    kubectl("create", "serviceaccount", "verifier")
    sa, _ = sa_kubectl(cluster, kubectl, tmp_path)
    uid = (cluster.get("ServiceAccount", "verifier") or {})["metadata"]["uid"]
    shown = dict(line.split(None, 1) for line in sa("auth", "whoami").splitlines()[1:])
    assert shown["Username"] == SA
    assert shown["UID"] == uid
    assert shown["Groups"] == "[system:serviceaccounts system:serviceaccounts:default system:authenticated]"
    info = json.loads(sa("auth", "whoami", "-o", "json"))
    assert info["kind"] == "SelfSubjectReview" and info["apiVersion"] == "authentication.k8s.io/v1"
    (credential,) = info["status"]["userInfo"]["extra"]["authentication.kubernetes.io/credential-id"]
    assert credential.startswith("JTI=")
    # the token mechanism of cluster.serviceaccount_token gives the same identity and groups
    helper = Kubectl(
        cluster.write_kubeconfig(
            tmp_path / "helper.kubeconfig", token=cluster.serviceaccount_token("default", "x")
        ),
        tmp_path,
    )
    shown = dict(line.split(None, 1) for line in helper("auth", "whoami").splitlines()[1:])
    assert shown["Username"] == "system:serviceaccount:default:x"
    assert shown["Groups"] == "[system:serviceaccounts system:serviceaccounts:default system:authenticated]"


def test_create_token_answers_and_refuses_as_the_apiserver_does(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    proc = kubectl.run("create", "token", "nope", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'error: failed to create token: serviceaccounts "nope" not found'
    kubectl("create", "serviceaccount", "verifier")
    proc = kubectl.run("create", "token", "verifier", "--duration=5m", check=False)
    assert proc.stderr.strip() == (
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
        "spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes"
    )
    req = json.loads(kubectl("create", "token", "verifier", "--duration=20m", "-o", "json"))
    assert req["kind"] == "TokenRequest" and req["spec"]["expirationSeconds"] == 1200
    assert req["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    assert req["status"]["token"] and req["status"]["expirationTimestamp"].endswith("Z")
    # a ServiceAccount's own token may not mint others without `create serviceaccounts/token`
    sa, _ = sa_kubectl(cluster, kubectl, tmp_path)
    proc = sa.run("create", "token", "verifier", check=False)
    assert proc.stderr.strip() == (
        f'error: failed to create token: serviceaccounts "verifier" is forbidden: User "{SA}" cannot create '
        'resource "serviceaccounts/token" in API group "" in the namespace "default"'
    )
    kubectl("create", "role", "minter", "--verb=create", "--resource=serviceaccounts/token")
    kubectl("create", "rolebinding", "minter", "--role=minter", "--serviceaccount=default:verifier")
    assert sa("create", "token", "verifier").count(".") == 2
    assert cluster.requests[("create", "serviceaccounts/token")] == 6  # refused ones included


def test_tokens_stop_authenticating_when_they_expire_or_are_for_another_audience(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "serviceaccount", "verifier")
    sa, token = sa_kubectl(cluster, kubectl, tmp_path)
    assert can_i(sa, "get", "/healthz") == (0, "yes")
    cluster.call(lambda: setattr(cluster.auth.tokens[token], "expires", 0.0))
    proc = sa.run("auth", "whoami", check=False)
    assert "error: You must be logged in to the server (Unauthorized)" in proc.stderr
    other = kubectl("create", "token", "verifier", "--audience=https://vault.example")
    kc = cluster.write_kubeconfig(tmp_path / "vault.kubeconfig", token=other, user="vault")
    proc = Kubectl(kc, tmp_path).run("auth", "whoami", check=False)
    assert "error: You must be logged in to the server (Unauthorized)" in proc.stderr


def test_a_token_bound_to_a_secret_dies_with_it(cluster: Cluster, kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("create", "serviceaccount", "verifier")
    kubectl(
        "apply",
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    )
    token = kubectl("create", "token", "verifier", "--bound-object-kind=Secret", "--bound-object-name=s")
    sa = Kubectl(cluster.write_kubeconfig(tmp_path / "bound.kubeconfig", token=token, user="b"), tmp_path)
    assert dict(line.split(None, 1) for line in sa("auth", "whoami").splitlines()[1:])["Username"] == SA
    proc = kubectl.run(
        "create", "token", "verifier", "--bound-object-kind=Pod", "--bound-object-name=p", check=False
    )
    assert proc.stderr.strip() == 'error: failed to create token: pods "p" not found'
    kubectl("delete", "secret", "s")
    assert "(Unauthorized)" in sa.run("auth", "whoami", check=False).stderr


def test_official_client_reviews_and_token_request(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    admin = k8s_config.new_client_from_config(config_file=kubectl.kubeconfig)
    try:
        token = client.CoreV1Api(admin).create_namespaced_service_account_token(
            "verifier",
            "default",
            client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[])),
        )
        assert token.status.token and token.spec.expiration_seconds == 3600
    finally:
        admin.close()
    kc = cluster.write_kubeconfig(tmp_path / "py.kubeconfig", token=token.status.token, user="py")
    api = k8s_config.new_client_from_config(config_file=kc)
    try:
        authz = client.AuthorizationV1Api(api)

        def review(**attrs: str) -> client.V1SubjectAccessReviewStatus:
            body = client.V1SelfSubjectAccessReview(
                spec=client.V1SelfSubjectAccessReviewSpec(
                    resource_attributes=client.V1ResourceAttributes(namespace="default", **attrs)
                )
            )
            answer = authz.create_self_subject_access_review(body)
            assert answer.spec.resource_attributes.verb == attrs["verb"]  # the spec is echoed
            return answer.status

        allowed = review(verb="get", group="apps", resource="deployments", name="web")
        assert allowed.allowed is True and not allowed.denied
        assert allowed.reason == (
            'RBAC: allowed by RoleBinding "verifier/default" of Role "verifier" to ServiceAccount "verifier/default"'
        )
        refused = review(verb="create", resource="pods", subresource="exec")
        assert (refused.allowed, refused.denied, refused.reason) == (False, None, None)  # no opinion
        assert review(verb="get", resource="pods", subresource="exec").allowed is True
        assert review(verb="patch", group="apps", resource="deployments", name="web").allowed is False
        rules = authz.create_self_subject_rules_review(
            client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace="default"))
        )
        assert rules.status.incomplete is False
        assert any(r.resources == ["pods/exec"] and r.verbs == ["get"] for r in rules.status.resource_rules)
        who = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
        assert who.status.user_info.username == SA
        with pytest.raises(ApiException) as err:
            authz.create_self_subject_rules_review(client.V1SelfSubjectRulesReview(spec={}))
        assert (err.value.status, json.loads(err.value.body)["message"]) == (400, "no namespace on request")
    finally:
        api.close()


def test_review_requests_are_validated_and_create_only(cluster: Cluster) -> None:
    with httpx.Client(
        base_url=cluster.url,
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
        timeout=30,
    ) as http:
        path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
        r = http.post(
            path,
            json={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}},
        )
        assert r.status_code == 422
        assert r.json()["message"] == (
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: '
            '"null": exactly one of nonResourceAttributes or resourceAttributes must be specified'
        )
        r = http.post(path, json={"spec": {"nonResourceAttributes": {"verb": "get", "path": "/version"}}})
        assert r.status_code == 201
        assert r.json()["status"] == {"allowed": True}  # system:masters: no RBAC reason
        assert http.get(path).status_code == 405
        assert http.post(path, json={}, headers={"Authorization": "Bearer nope"}).status_code == 401
        groups = {g["name"] for g in http.get("/apis").json()["groups"]}
        assert {"authorization.k8s.io", "authentication.k8s.io"} <= groups
        core = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
        assert core["serviceaccounts/token"]["kind"] == "TokenRequest"
        assert core["serviceaccounts/token"]["verbs"] == ["create"]


def test_without_the_review_api_can_i_fails_as_against_a_server_without_it(tmp_path: Path) -> None:
    with Cluster(nodes=1, knobs=Knobs(access_reviews=False), root=str(tmp_path / "sim")) as cluster:
        (tmp_path / "home").mkdir()
        kubectl = Kubectl(cluster.write_kubeconfig(tmp_path / "kc"), tmp_path / "home")
        groups = kubectl("api-versions").split()
        assert "authorization.k8s.io/v1" not in groups and "authentication.k8s.io/v1" in groups
        proc = kubectl.run("auth", "can-i", "get", "pods", check=False)
        assert proc.returncode == 1
        assert "the server could not find the requested resource" in proc.stderr
        assert kubectl("auth", "whoami").splitlines()[1].split() == ["Username", "kubernetes-admin"]


def test_a_protobuf_body_of_a_kind_without_a_table_gets_415(cluster: Cluster) -> None:
    # the envelope (runtime.Unknown after `k8s\x00`) of a kind protobuf_body.py has no table for
    type_meta = b"\x0a\x14networking.k8s.io/v1\x12\x0dNetworkPolicy"
    body = b"k8s\x00" + b"\x0a" + bytes([len(type_meta)]) + type_meta + b"\x12\x00"
    with httpx.Client(
        base_url=cluster.url,
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
    ) as http:
        r = http.post(
            "/api/v1/namespaces/default/services",
            content=body,
            headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
        )
    assert r.status_code == 415
    assert "the body of the request was in an unknown format" in r.json()["message"]
