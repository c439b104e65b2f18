"""Schema table (openapi_schema.py's notation) of the kinds every cluster serves beside the workloads:
their fields, types and shortened real descriptions (kubernetes/kubernetes api/openapi-spec/v3),
so `kubectl explain cronjob.spec` works and field validation knows them. Statuses and the
sub-objects kubesim does not read are open objects."""

from __future__ import annotations

_STATUS = "Current status, populated by the system. Read-only."

CLUSTER_KINDS = f"""
@batch.CronJob CronJob represents the configuration of a single cron job.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec batch.CronJobSpec +value | Specification of the desired behavior of a cron job, including the schedule.
status object | Current status of a cron job.

@batch.CronJobSpec CronJobSpec describes how the job execution will look like and when it will actually run.
concurrencyPolicy string | Specifies how to treat concurrent executions of a Job. Valid values are: "Allow" (default), "Forbid" and "Replace".
failedJobsHistoryLimit int32 | The number of failed finished jobs to retain. Value must be non-negative integer. Defaults to 1.
jobTemplate! batch.JobTemplateSpec +value | Specifies the job that will be created when executing a CronJob.
schedule! string | The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.
startingDeadlineSeconds int64 | Optional deadline in seconds for starting the job if it misses scheduled time for any reason.  Missed jobs executions will be counted as failed ones.
successfulJobsHistoryLimit int32 | The number of successful finished jobs to retain. Value must be non-negative integer. Defaults to 3.
suspend boolean | This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.
timeZone string | The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.

@batch.JobTemplateSpec JobTemplateSpec describes the data a Job should have when created from a template
metadata meta.ObjectMeta +value | Standard object's metadata of the jobs created from this template.
spec batch.JobSpec +value | Specification of the desired behavior of the job.

@autoscaling.HorizontalPodAutoscaler HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler, which automatically manages the replica count of any resource implementing the scale subresource based on the metrics specified.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | metadata is the standard object metadata.
spec autoscaling.HorizontalPodAutoscalerSpec +value | spec is the specification for the behaviour of the autoscaler.
status object | status is the current information about the autoscaler.

@autoscaling.HorizontalPodAutoscalerSpec HorizontalPodAutoscalerSpec describes the desired functionality of the HorizontalPodAutoscaler.
behavior object | behavior configures the scaling behavior of the target in both Up and Down directions (scaleUp and scaleDown fields respectively).
maxReplicas! int32 | maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.
metrics []object +atomic | metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).
minReplicas int32 | minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.
scaleTargetRef! autoscaling.CrossVersionObjectReference +value | scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.

@autoscaling.CrossVersionObjectReference +atomic CrossVersionObjectReference contains enough information to let you identify the referred resource.
apiVersion string | apiVersion is the API version of the referent
kind! string | kind is the kind of the referent; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
name! string | name is the name of the referent; More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names

@policy.PodDisruptionBudget PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec policy.PodDisruptionBudgetSpec +value | Specification of the desired behavior of the PodDisruptionBudget.
status object | Most recently observed status of the PodDisruptionBudget.

@policy.PodDisruptionBudgetSpec PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.
maxUnavailable IntOrString | An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction, i.e. even in absence of the evicted pod.
minAvailable IntOrString | An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction, i.e. even in the absence of the evicted pod.
selector meta.LabelSelector | Label query over pods whose evictions are managed by the disruption budget. A null selector will match no pods, while an empty ({{}}) selector will select all pods within the namespace.
unhealthyPodEvictionPolicy string | UnhealthyPodEvictionPolicy defines the criteria for when unhealthy pods should be considered for eviction. Valid policies are IfHealthyBudget and AlwaysAllow.

@core.ResourceQuota ResourceQuota sets aggregate quota restrictions enforced per namespace
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec core.ResourceQuotaSpec +value | Spec defines the desired quota.
status object | Status defines the actual enforced quota and its current usage.

@core.ResourceQuotaSpec ResourceQuotaSpec defines the desired hard limits to enforce for Quota.
hard {{}}Quantity | hard is the set of desired hard limits for each named resource.
scopeSelector object | scopeSelector is also a collection of filters like scopes that must match each object tracked by a quota but expressed using ScopeSelectorOperator in combination with possible values.
scopes []string +atomic | A collection of filters that must match each object tracked by a quota. If not specified, the quota matches all objects.

@core.LimitRange LimitRange sets resource usage limits for each kind of resource in a Namespace.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec core.LimitRangeSpec +value | Spec defines the limits enforced.

@core.LimitRangeSpec LimitRangeSpec defines a min/max usage limit for resources that match on kind.
limits! []core.LimitRangeItem +atomic | Limits is the list of LimitRangeItem objects that are enforced.

@core.LimitRangeItem LimitRangeItem defines a min/max usage limit for any resource that matches on kind.
default {{}}Quantity | Default resource requirement limit value by resource name if resource limit is omitted.
defaultRequest {{}}Quantity | DefaultRequest is the default resource requirement request value by resource name if resource request is omitted.
max {{}}Quantity | Max usage constraints on this kind by resource name.
maxLimitRequestRatio {{}}Quantity | MaxLimitRequestRatio if specified, the named resource must have a request and limit that are both non-zero where limit divided by request is less than or equal to the enumerated value; this represents the max burst for the named resource.
min {{}}Quantity | Min usage constraints on this kind by resource name.
type! string | Type of resource that this limit applies to.

@core.ReplicationController ReplicationController represents the configuration of a replication controller.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | If the Labels of a ReplicationController are empty, they are defaulted to be the same as the Pod(s) that the replication controller manages. {{METADATA}}
spec core.ReplicationControllerSpec +value | Spec defines the specification of the desired behavior of the replication controller.
status object | Status is the most recently observed status of the replication controller.

@core.ReplicationControllerSpec ReplicationControllerSpec is the specification of a replication controller.
minReadySeconds int32 | Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.
replicas int32 | Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1.
selector {{}}string +atomic | Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template.
template core.PodTemplateSpec | Template is the object that describes the pod that will be created if insufficient replicas are detected.

@networking.Ingress Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec networking.IngressSpec +value | spec is the desired state of the Ingress.
status object | status is the current state of the Ingress.

@networking.IngressSpec IngressSpec describes the Ingress the user wishes to exist.
defaultBackend object | defaultBackend is the backend that should handle requests that don't match any rule.
ingressClassName string | ingressClassName is the name of an IngressClass cluster resource.
rules []object +atomic | rules is a list of host rules used to configure the Ingress. If unspecified, or no rule matches, all traffic is sent to the default backend.
tls []object +atomic | tls represents the TLS configuration.

@networking.IngressClass IngressClass represents the class of the Ingress, referenced by the Ingress Spec.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec object | spec is the desired state of the IngressClass.

@networking.NetworkPolicy NetworkPolicy describes what network traffic is allowed for a set of Pods
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec networking.NetworkPolicySpec +value | spec represents the specification of the desired behavior for this NetworkPolicy.

@networking.NetworkPolicySpec NetworkPolicySpec provides the specification of a NetworkPolicy
egress []object +atomic | egress is a list of egress rules to be applied to the selected pods.
ingress []object +atomic | ingress is a list of ingress rules to be applied to the selected pods.
podSelector meta.LabelSelector +value | podSelector selects the pods to which this NetworkPolicy object applies. An empty podSelector selects all pods in this namespace.
policyTypes []string +atomic | policyTypes is a list of rule types that the NetworkPolicy relates to. Valid options are ["Ingress"], ["Egress"], or ["Ingress", "Egress"].

@coordination.Lease Lease defines a lease concept.
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec coordination.LeaseSpec +value | spec contains the specification of the Lease.

@coordination.LeaseSpec LeaseSpec is a specification of a Lease.
acquireTime string | acquireTime is a time when the current lease was acquired.
holderIdentity string | holderIdentity contains the identity of the holder of a current lease.
leaseDurationSeconds int32 | leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it.
leaseTransitions int32 | leaseTransitions is the number of transitions of a lease between holders.
preferredHolder string | PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.
renewTime string | renewTime is a time when the current holder of a lease has last updated the lease.
strategy string | Strategy indicates the strategy for picking the leader for coordinated leader election.

@scheduling.PriorityClass PriorityClass defines mapping from a priority class name to the priority integer value.
apiVersion string | {{API_VERSION}}
description string | description is an arbitrary string that usually provides guidelines on when this priority class should be used.
globalDefault boolean | globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
preemptionPolicy string | preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.
value! int32 | value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.

@apiregistration.APIService APIService represents a server for a particular GroupVersion. Name must be "version.group".
apiVersion string | {{API_VERSION}}
kind string | {{KIND}}
metadata meta.ObjectMeta +value | {{METADATA}}
spec object | Spec contains information for locating and communicating with a server
status object | {_STATUS}
"""

PREFIXES = {
    "autoscaling": ("io.k8s.api.autoscaling.v2", "autoscaling"),
    "policy": ("io.k8s.api.policy.v1", "policy"),
    "networking": ("io.k8s.api.networking.v1", "networking.k8s.io"),
    "coordination": ("io.k8s.api.coordination.v1", "coordination.k8s.io"),
    "scheduling": ("io.k8s.api.scheduling.v1", "scheduling.k8s.io"),
    "apiregistration": ("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1", "apiregistration.k8s.io"),
}
