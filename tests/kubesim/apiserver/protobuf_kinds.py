"""Field tables for the workload and configuration kinds kubectl's imperative `create` commands send
as protobuf: `create deployment|configmap|secret generic|namespace|job` (protobuf_body.py decodes).

Field numbers are those of k8s.io/api's generated.proto files (kubernetes/kubernetes
staging/src/k8s.io/api/core/v1/generated.proto, apps/v1/generated.proto, batch/v1/generated.proto)
and k8s.io/apimachinery/pkg/apis/meta/v1 and pkg/util/intstr generated.proto, written out by hand
for the fields these commands (and a hand-written manifest of the same kinds) use. A field not in
a table is skipped. Statuses are the server's to fill and are not read."""

from __future__ import annotations

_S, _I, _B = "string", "int", "bool"

SCHEMAS: dict[str, dict[int, tuple[str, str, bool]]] = {
    # meta/v1
    "LabelSelector": {
        1: ("matchLabels", "map", False),
        2: ("matchExpressions", "LabelSelectorRequirement", True),
    },
    "LabelSelectorRequirement": {1: ("key", _S, False), 2: ("operator", _S, False), 3: ("values", _S, True)},
    # core/v1
    "ConfigMap": {
        1: ("metadata", "ObjectMeta", False),
        2: ("data", "map", False),
        3: ("binaryData", "map:bytes", False),
        4: ("immutable", _B, False),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta", False),
        2: ("data", "map:bytes", False),
        3: ("type", _S, False),
        4: ("stringData", "map", False),
        5: ("immutable", _B, False),
    },
    "Namespace": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "NamespaceSpec", False)},
    "NamespaceSpec": {1: ("finalizers", _S, True)},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "PodSpec", False)},
    "PodSpec": {
        2: ("containers", "Container", True),
        3: ("restartPolicy", _S, False),
        4: ("terminationGracePeriodSeconds", _I, False),
        5: ("activeDeadlineSeconds", _I, False),
        6: ("dnsPolicy", _S, False),
        7: ("nodeSelector", "map", False),
        8: ("serviceAccountName", _S, False),
        9: ("serviceAccount", _S, False),
        10: ("nodeName", _S, False),
        11: ("hostNetwork", _B, False),
        15: ("imagePullSecrets", "LocalObjectReference", True),
        16: ("hostname", _S, False),
        17: ("subdomain", _S, False),
        19: ("schedulerName", _S, False),
        20: ("initContainers", "Container", True),
        21: ("automountServiceAccountToken", _B, False),
        30: ("enableServiceLinks", _B, False),
    },
    "Container": {
        1: ("name", _S, False),
        2: ("image", _S, False),
        3: ("command", _S, True),
        4: ("args", _S, True),
        5: ("workingDir", _S, False),
        6: ("ports", "ContainerPort", True),
        7: ("env", "EnvVar", True),
        8: ("resources", "ResourceRequirements", False),
        13: ("terminationMessagePath", _S, False),
        14: ("imagePullPolicy", _S, False),
        16: ("stdin", _B, False),
        17: ("stdinOnce", _B, False),
        18: ("tty", _B, False),
        20: ("terminationMessagePolicy", _S, False),
    },
    "ContainerPort": {
        1: ("name", _S, False),
        2: ("hostPort", _I, False),
        3: ("containerPort", _I, False),
        4: ("protocol", _S, False),
        5: ("hostIP", _S, False),
    },
    "EnvVar": {1: ("name", _S, False), 2: ("value", _S, False)},
    "ResourceRequirements": {1: ("limits", "map:Quantity", False), 2: ("requests", "map:Quantity", False)},
    # apps/v1
    "Deployment": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "DeploymentSpec", False)},
    "DeploymentSpec": {
        1: ("replicas", _I, False),
        2: ("selector", "LabelSelector", False),
        3: ("template", "PodTemplateSpec", False),
        4: ("strategy", "DeploymentStrategy", False),
        5: ("minReadySeconds", _I, False),
        6: ("revisionHistoryLimit", _I, False),
        7: ("paused", _B, False),
        9: ("progressDeadlineSeconds", _I, False),
    },
    "DeploymentStrategy": {1: ("type", _S, False), 2: ("rollingUpdate", "RollingUpdateDeployment", False)},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "intstr", False), 2: ("maxSurge", "intstr", False)},
    # batch/v1
    "Job": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "JobSpec", False)},
    "JobSpec": {
        1: ("parallelism", _I, False),
        2: ("completions", _I, False),
        3: ("activeDeadlineSeconds", _I, False),
        4: ("selector", "LabelSelector", False),
        5: ("manualSelector", _B, False),
        6: ("template", "PodTemplateSpec", False),
        7: ("backoffLimit", _I, False),
        8: ("ttlSecondsAfterFinished", _I, False),
        9: ("completionMode", _S, False),
        10: ("suspend", _B, False),
        14: ("podReplacementPolicy", _S, False),
    },
}

KINDS = {"ConfigMap", "Secret", "Namespace", "Deployment", "Job"}

# pointer fields (Go `*int32`, `*bool`): written only when set, so an explicit 0 or false is kept
KEEP_ZERO = {
    "immutable",
    "replicas",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "enableServiceLinks",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "parallelism",
    "completions",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "suspend",
    "manualSelector",
}
