"""One argv splitter for the three cloud minters: what each plugin's own flag parser accepts, and
each platform's rule for a valued flag given last without its value."""

from __future__ import annotations

import pytest

from verify.kube.cloud import aks, eks, gke
from verify.kube.cloud.args import Split, split

VALUED = {"--name": "name", "-n": "name", "--cache": ""}
BOOLS = {"--flag": "flag"}


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["get", "--name", "a", "-n=b"], Split(("get",), {"name": "b"})),  # both spellings, last wins
        (["--cache", "/tmp/x", "get"], Split(("get",))),  # understood and ignored
        (["--flag", "get"], Split(("get",), {}, {"flag": True})),  # a boolean never takes the next word
        (["--flag=false"], Split((), {}, {"flag": False})),
        (["--flag=T", "--name="], Split((), {"name": ""}, {"flag": True})),
        (["--flag=yes"], None),  # not a ParseBool spelling
        (["--other", "x"], None),
        (["get", "--name"], None),  # a valued flag without its value: refused
    ],
)
def test_the_splitter_reads_flags_as_pflag_does(args: list[str], wanted: Split | None) -> None:
    assert split(args, valued=VALUED, booleans=BOOLS, missing="refuse") == wanted


def test_a_missing_last_value_is_empty_or_refused_as_the_platform_asks() -> None:
    assert split(["--name"], valued=VALUED, missing="empty") == Split((), {"name": ""})
    assert split(["--name"], valued=VALUED, missing="refuse") is None


def test_each_platform_keeps_its_rule_for_a_trailing_flag() -> None:
    # EKS: the trailing flag is empty (awscli sends no region); a trailing cluster name is no request
    request = eks.parse("aws", ["eks", "get-token", "--cluster-name", "c", "--region"])
    assert request is not None and (request.cluster, request.region) == ("c", "")
    assert eks.parse("aws", ["eks", "get-token", "--cluster-name"]) is None
    assert eks.parse("aws-iam-authenticator", ["token", "-i", "c", "--unknown"]) is None
    # AKS: a valued flag without its value is not minted at all
    base = ["get-token", "--login", "spn", "--server-id", "s"]
    assert aks.parse("kubelogin", base) is not None
    assert aks.parse("kubelogin", [*base, "--client-id"]) is None
    assert aks.parse("kubelogin", [*base, "--disable-instance-discovery", "get-token"]) is None  # 2 positionals
    # GKE: only its one boolean, no argument
    assert gke.parse("gke-gcloud-auth-plugin", ["--use_application_default_credentials"]) == gke.Request(
        "gke-gcloud-auth-plugin", True
    )
    assert gke.parse("gke-gcloud-auth-plugin", ["extra"]) is None
