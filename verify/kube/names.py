"""Names Kubernetes defines, each once: the object-name and label rules the API server enforces,
env var names as the kubelet accepts them, the well-known annotations and labels we read or
write, and where the service account is mounted."""

from __future__ import annotations

import re

# apimachinery's validation (IsDNS1123Label, IsDNS1123Subdomain, IsQualifiedName, IsValidLabelValue)
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?\Z")
# a ConfigMap's or Secret's data key (IsConfigMapKey)
OBJECT_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
# what the kubelet accepts as an env var name (IsEnvVarName); dash does not export the ones
# that are not also shell identifiers
ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")

# written by `kubectl rollout restart` (and by us, the same way)
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# the deployment controller's revision number, on the Deployment and its ReplicaSets
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_HASH_LABEL = "controller-revision-hash"  # StatefulSet and DaemonSet pods

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_ACCOUNT_TOKEN = f"{SERVICE_ACCOUNT_DIR}/token"
SERVICE_ACCOUNT_NAMESPACE = f"{SERVICE_ACCOUNT_DIR}/namespace"


def valid_subdomain(name: str) -> bool:
    """Object names (workloads, ConfigMaps, Secrets) are DNS-1123 subdomains."""
    return len(name) <= 253 and bool(DNS1123_SUBDOMAIN.match(name))


def valid_label(name: str) -> bool:
    """Namespaces and container names are DNS-1123 labels."""
    return len(name) <= 63 and bool(DNS1123_LABEL.match(name))
