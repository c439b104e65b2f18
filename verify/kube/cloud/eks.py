"""EKS tokens without the aws CLI: what `aws eks get-token` (awscli customizations/eks/
get_token.py) and `aws-iam-authenticator token` (pkg/token/token.go) print. The token is
`k8s-aws-v1.` + the unpadded base64url of a SigV4-presigned `GET https://sts.<region>.amazonaws.com/
?Action=GetCallerIdentity&Version=2011-06-15` that also signs the header `x-k8s-aws-id: <cluster>`;
the cluster's authenticator hands it to STS, which answers with the signer's identity. botocore
signs (imported only here, only when minting: the `cloud` extra)."""

from __future__ import annotations

import base64
import datetime as dt
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verify.errors import KubeConfigError
from verify.kube.cloud.args import split
from verify.kube.plugins import Credential, failure, shown

PREFIX = "k8s-aws-v1."
CLUSTER_ID_HEADER = "x-k8s-aws-id"
PRESIGN_EXPIRES = 60  # X-Amz-Expires as both CLIs send it; STS honours 15 minutes from X-Amz-Date
LIFETIME = dt.timedelta(minutes=14)  # the ExecCredential expiry both CLIs give: a minute to spare

# flags understood, each with a value, by command; anything else and the plugin is not minted
_AWS_FLAGS = {"--region", "--cluster-name", "--cluster-id", "--role-arn", "--profile", "--output"}
_AUTHENTICATOR_FLAGS = {
    "-i": "--cluster-id",
    "--cluster-id": "--cluster-id",
    "-r": "--role-arn",
    "--role": "--role-arn",
    "--region": "--region",
}


@dataclass(frozen=True)
class Request:
    command: str  # as the kubeconfig names it: aws or aws-iam-authenticator
    cluster: str  # the value signed as x-k8s-aws-id
    region: str | None = None
    role_arn: str | None = None
    profile: str | None = None


def parse(command: str, args: list[str]) -> Request | None:
    """The request of `aws [--region R] eks get-token --cluster-name N [--role-arn A]` (as `aws eks
    update-kubeconfig` writes it) or `aws-iam-authenticator token -i N [-r A]`; None otherwise."""
    wanted: tuple[str, ...]
    if command == "aws":
        parsed, wanted = split(args, valued={f: f for f in _AWS_FLAGS}, missing="empty"), ("eks", "get-token")
    elif command == "aws-iam-authenticator":
        parsed, wanted = split(args, valued=_AUTHENTICATOR_FLAGS, missing="empty"), ("token",)
    else:
        return None
    if parsed is None or parsed.positional != wanted:
        return None
    flags = parsed.values
    cluster = flags.get("--cluster-id") or flags.get("--cluster-name")
    if not cluster:
        return None
    return Request(command, cluster, flags.get("--region"), flags.get("--role-arn"), flags.get("--profile"))


def sts_host(region: str | None) -> tuple[str, str]:
    """(host, signing region): the regional endpoint, or the global one (us-east-1) without one."""
    if not region:
        return "sts.amazonaws.com", "us-east-1"
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"sts.{region}.{suffix}", region


def mint(
    request: Request, *, exec_cfg: Mapping[str, Any], timeout: float, environ: Mapping[str, str]
) -> Credential:
    """A fresh token for `request.cluster` from the standard AWS credentials of `environ`
    (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, else botocore's chain: profile,
    web identity, SSO, container or instance role), through `--role-arn` when given."""
    try:
        import botocore.session
        from botocore.auth import SigV4QueryAuth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        raise _failed(request, exec_cfg, "needs botocore: install rollout-verify[cloud]") from None
    try:
        session = None
        key, secret = environ.get("AWS_ACCESS_KEY_ID"), environ.get("AWS_SECRET_ACCESS_KEY")
        if request.profile is None and key and secret:
            credentials: Any = Credentials(key, secret, environ.get("AWS_SESSION_TOKEN") or None)
            source = "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
        else:
            profile = request.profile or environ.get("AWS_PROFILE") or None
            session = botocore.session.Session(profile=profile)
            credentials = session.get_credentials()
            source = f"AWS profile {shown(profile)!r}" if profile else "botocore's default credential chain"
        if credentials is None:
            raise _failed(
                request,
                exec_cfg,
                "found no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "a profile, web identity or an instance role)",
            )
        region = (
            request.region
            or environ.get("AWS_REGION")
            or environ.get("AWS_DEFAULT_REGION")
            or (session.get_config_variable("region") if session is not None else None)
        )
        frozen = credentials.get_frozen_credentials()
        if request.role_arn:
            frozen = _assume(request.role_arn, frozen, region=region, timeout=timeout)
        host, signing_region = sts_host(region)
        presign = AWSRequest(
            method="GET",
            url=f"https://{host}/?Action=GetCallerIdentity&Version=2011-06-15",
            headers={CLUSTER_ID_HEADER: request.cluster},
        )
        SigV4QueryAuth(frozen, "sts", signing_region, expires=PRESIGN_EXPIRES).add_auth(presign)
    except (BotoCoreError, ClientError) as e:
        raise _failed(request, exec_cfg, shown(str(e))) from None
    url: str = presign.url
    token = PREFIX + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    role = f" as role {shown(request.role_arn)}" if request.role_arn else ""
    origin = (
        f"the EKS token for cluster {shown(request.cluster)!r} minted in-process ({request.command} is not "
        f"on PATH) from {source}{role}, signed for {host}: check those credentials and that the cluster "
        "grants their IAM identity access (an access entry or aws-auth)"
    )
    return Credential(token=token, expires=dt.datetime.now(dt.UTC) + LIFETIME, origin=origin)


def _assume(role_arn: str, frozen: Any, *, region: str | None, timeout: float) -> Any:
    """The role's temporary credentials (STS AssumeRole), within the plugin call's time."""
    import botocore.session
    from botocore.config import Config
    from botocore.credentials import Credentials

    seconds = max(1.0, min(timeout, 30.0))
    sts = botocore.session.Session().create_client(
        "sts",
        region_name=region or "us-east-1",
        aws_access_key_id=frozen.access_key,
        aws_secret_access_key=frozen.secret_key,
        aws_session_token=frozen.token,
        config=Config(connect_timeout=seconds, read_timeout=seconds, retries={"max_attempts": 2}),
    )
    answer = sts.assume_role(RoleArn=role_arn, RoleSessionName=f"rollout-verify-{int(time.time())}")
    c = answer["Credentials"]
    return Credentials(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"]).get_frozen_credentials()


def _failed(request: Request, exec_cfg: Mapping[str, Any], why: str) -> KubeConfigError:
    return failure(
        request.command,
        f"is not installed (not found on PATH) and its EKS token for cluster {shown(request.cluster)!r} "
        f"could not be minted in-process: {why}",
        exec_cfg,
    )
