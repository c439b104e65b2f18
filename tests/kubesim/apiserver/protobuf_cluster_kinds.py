"""Field tables for the kinds kubectl's `create cronjob|pdb|quota|priorityclass|ingress` and
`autoscale` send as protobuf (protobuf_body.py decodes). Field numbers are those of k8s.io/api's
generated.proto (kubernetes/kubernetes staging/src/k8s.io/api/batch/v1, policy/v1, core/v1,
scheduling/v1, networking/v1, autoscaling/v1), checked against the bodies kubectl 1.32 sends
(`-v=9` prints them). A field not in a table is skipped. An empty JSON name inlines the message
(IngressRule's embedded IngressRuleValue: `http` sits beside `host` in JSON)."""

from __future__ import annotations

_S, _I, _B = "string", "int", "bool"

SCHEMAS: dict[str, dict[int, tuple[str, str, bool]]] = {
    # batch/v1
    "CronJob": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "CronJobSpec", False)},
    "CronJobSpec": {
        1: ("schedule", _S, False),
        2: ("startingDeadlineSeconds", _I, False),
        3: ("concurrencyPolicy", _S, False),
        4: ("suspend", _B, False),
        5: ("jobTemplate", "JobTemplateSpec", False),
        6: ("successfulJobsHistoryLimit", _I, False),
        7: ("failedJobsHistoryLimit", _I, False),
        8: ("timeZone", _S, False),
    },
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "JobSpec", False)},
    # policy/v1
    "PodDisruptionBudget": {
        1: ("metadata", "ObjectMeta", False),
        2: ("spec", "PodDisruptionBudgetSpec", False),
    },
    "PodDisruptionBudgetSpec": {
        1: ("minAvailable", "intstr", False),
        2: ("selector", "LabelSelector", False),
        3: ("maxUnavailable", "intstr", False),
        4: ("unhealthyPodEvictionPolicy", _S, False),
    },
    # core/v1
    "ResourceQuota": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "ResourceQuotaSpec", False)},
    "ResourceQuotaSpec": {
        1: ("hard", "map:Quantity", False),
        2: ("scopes", _S, True),
        3: ("scopeSelector", "ScopeSelector", False),
    },
    "ScopeSelector": {1: ("matchExpressions", "ScopedResourceSelectorRequirement", True)},
    "ScopedResourceSelectorRequirement": {
        1: ("scopeName", _S, False),
        2: ("operator", _S, False),
        3: ("values", _S, True),
    },
    # scheduling/v1
    "PriorityClass": {
        1: ("metadata", "ObjectMeta", False),
        2: ("value", _I, False),
        3: ("globalDefault", _B, False),
        4: ("description", _S, False),
        5: ("preemptionPolicy", _S, False),
    },
    # autoscaling/v1 (kubectl autoscale; converted to v2 by versions.py)
    "HorizontalPodAutoscaler": {
        1: ("metadata", "ObjectMeta", False),
        2: ("spec", "HorizontalPodAutoscalerSpec", False),
    },
    "HorizontalPodAutoscalerSpec": {
        1: ("scaleTargetRef", "CrossVersionObjectReference", False),
        2: ("minReplicas", _I, False),
        3: ("maxReplicas", _I, False),
        4: ("targetCPUUtilizationPercentage", _I, False),
    },
    "CrossVersionObjectReference": {
        1: ("kind", _S, False),
        2: ("name", _S, False),
        3: ("apiVersion", _S, False),
    },
    # policy/v1 (kubectl drain's evictions)
    "Eviction": {1: ("metadata", "ObjectMeta", False), 2: ("deleteOptions", "DeleteOptions", False)},
    "DeleteOptions": {
        1: ("gracePeriodSeconds", _I, False),
        3: ("orphanDependents", _B, False),
        4: ("propagationPolicy", _S, False),
        5: ("dryRun", _S, True),
    },
    # networking/v1
    "Ingress": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "IngressSpec", False)},
    "IngressSpec": {
        1: ("defaultBackend", "IngressBackend", False),
        2: ("tls", "IngressTLS", True),
        3: ("rules", "IngressRule", True),
        4: ("ingressClassName", _S, False),
    },
    "IngressTLS": {1: ("hosts", _S, True), 2: ("secretName", _S, False)},
    "IngressRule": {1: ("host", _S, False), 2: ("", "IngressRuleValue", False)},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue", False)},
    "HTTPIngressRuleValue": {1: ("paths", "HTTPIngressPath", True)},
    "HTTPIngressPath": {
        1: ("path", _S, False),
        2: ("backend", "IngressBackend", False),
        3: ("pathType", _S, False),
    },
    "IngressBackend": {
        3: ("resource", "TypedLocalObjectReference", False),
        4: ("service", "IngressServiceBackend", False),
    },
    "TypedLocalObjectReference": {1: ("apiGroup", _S, False), 2: ("kind", _S, False), 3: ("name", _S, False)},
    "IngressServiceBackend": {1: ("name", _S, False), 2: ("port", "ServiceBackendPort", False)},
    "ServiceBackendPort": {1: ("name", _S, False), 2: ("number", _I, False)},
}

KINDS = {
    "Eviction",
    "CronJob",
    "PodDisruptionBudget",
    "ResourceQuota",
    "PriorityClass",
    "HorizontalPodAutoscaler",
    "Ingress",
}

# pointer fields: present only when set, so an explicit 0 or false is kept
KEEP_ZERO = {
    "startingDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "minReplicas",
    "targetCPUUtilizationPercentage",
    "minAvailable",
    "maxUnavailable",
    "gracePeriodSeconds",
    "orphanDependents",
}
