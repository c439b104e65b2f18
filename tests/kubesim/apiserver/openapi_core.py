"""The hand-written schema table, part 2: the core/v1 kinds kubesim serves and the pod types they
carry (notation and source: openapi_meta.py; kubernetes/kubernetes api/openapi-spec/v3/
api__v1_openapi.json). Types kubesim does not describe field by field are `object` (open)."""

from __future__ import annotations

CORE = """
@core.Pod Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec core.PodSpec +value | Specification of the desired behavior of the pod.
status object | Most recently observed status of the pod. This data may not be up to date. Populated by the system. Read-only.

@core.PodTemplateSpec PodTemplateSpec describes the data a pod should have when created from a template
metadata meta.ObjectMeta +value | {METADATA}
spec core.PodSpec +value | Specification of the desired behavior of the pod.

@core.PodSpec PodSpec is a description of a pod.
activeDeadlineSeconds int64 | Optional duration in seconds the pod may be active on the node relative to StartTime before the system will actively try to mark it failed and kill associated containers. Value must be a positive integer.
affinity object | If specified, the pod's scheduling constraints
automountServiceAccountToken boolean | AutomountServiceAccountToken indicates whether a service account token should be automatically mounted.
containers! []core.Container +map=name +smp=name | List of containers belonging to the pod. Containers cannot currently be added or removed. There must be at least one container in a Pod. Cannot be updated.
dnsConfig object | Specifies the DNS parameters of a pod. Parameters specified here will be merged to the generated DNS configuration based on DNSPolicy.
dnsPolicy string | Set DNS policy for the pod. Defaults to "ClusterFirst". Valid values are 'ClusterFirstWithHostNet', 'ClusterFirst', 'Default' or 'None'.
enableServiceLinks boolean | EnableServiceLinks indicates whether information about services should be injected into pod's environment variables, matching the syntax of Docker links. Optional: Defaults to true.
ephemeralContainers []object +map=name +smp=name | List of ephemeral containers run in this pod. Ephemeral containers may be run in an existing pod to perform user-initiated actions such as debugging.
hostAliases []object +map=ip +smp=ip | HostAliases is an optional list of hosts and IPs that will be injected into the pod's hosts file if specified.
hostIPC boolean | Use the host's ipc namespace. Optional: Default to false.
hostNetwork boolean | Host networking requested for this pod. Use the host's network namespace. Default to false.
hostPID boolean | Use the host's pid namespace. Optional: Default to false.
hostUsers boolean | Use the host's user namespace. Optional: Default to true.
hostname string | Specifies the hostname of the Pod If not specified, the pod's hostname will be set to a system-defined value.
imagePullSecrets []core.LocalObjectReference +map=name +smp=name | ImagePullSecrets is an optional list of references to secrets in the same namespace to use for pulling any of the images used by this PodSpec.
initContainers []core.Container +map=name +smp=name | List of initialization containers belonging to the pod. Init containers are executed in order prior to containers being started.
nodeName string | NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.
nodeSelector {}string +atomic | NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.
os object | Specifies the OS of the containers in the pod. Some pod and container fields are restricted if this is set.
overhead {}Quantity | Overhead represents the resource overhead associated with running a pod for a given RuntimeClass.
preemptionPolicy string | PreemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.
priority int32 | The priority value. Various system components use this field to find the priority of the pod.
priorityClassName string | If specified, indicates the pod's priority. "system-node-critical" and "system-cluster-critical" are two special keywords which indicate the highest priorities.
readinessGates []object +atomic | If specified, all readiness gates will be evaluated for pod readiness.
resourceClaims []object +map=name +smp=name | ResourceClaims defines which ResourceClaims must be allocated and reserved before the Pod is allowed to start.
resources core.ResourceRequirements | Resources is the total amount of CPU and Memory resources required by all containers in the pod.
restartPolicy string | Restart policy for all containers within the pod. One of Always, OnFailure, Never. In some contexts, only a subset of those values may be permitted. Default to Always.
runtimeClassName string | RuntimeClassName refers to a RuntimeClass object in the node.k8s.io group, which should be used to run this pod.
schedulerName string | If specified, the pod will be dispatched by specified scheduler. If not specified, the pod will be dispatched by default scheduler.
schedulingGates []object +map=name +smp=name | SchedulingGates is an opaque list of values that if specified will block scheduling the pod.
securityContext object | SecurityContext holds pod-level security attributes and common container settings. Optional: Defaults to empty.
serviceAccount string | DeprecatedServiceAccount is a deprecated alias for ServiceAccountName. Deprecated: Use serviceAccountName instead.
serviceAccountName string | ServiceAccountName is the name of the ServiceAccount to use to run this pod.
setHostnameAsFQDN boolean | If true the pod's hostname will be configured as the pod's FQDN, rather than the leaf name (the default).
shareProcessNamespace boolean | Share a single process namespace between all of the containers in a pod. Optional: Default to false.
subdomain string | If specified, the fully qualified Pod hostname will be "<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>". If not specified, the pod will not have a domainname at all.
terminationGracePeriodSeconds int64 | Optional duration in seconds the pod needs to terminate gracefully. May be decreased in delete request. Value must be non-negative integer. Defaults to 30 seconds.
tolerations []core.Toleration +atomic | If specified, the pod's tolerations.
topologySpreadConstraints []object +map=topologyKey,whenUnsatisfiable +smp=topologyKey | TopologySpreadConstraints describes how a group of pods ought to spread across topology domains.
volumes []core.Volume +map=name +smp=name | List of volumes that can be mounted by containers belonging to the pod.

@core.Container A single application container that you want to run within a pod.
args []string +atomic | Arguments to the entrypoint. The container image's CMD is used if this is not provided. Variable references $(VAR_NAME) are expanded using the container's environment.
command []string +atomic | Entrypoint array. Not executed within a shell. The container image's ENTRYPOINT is used if this is not provided. Variable references $(VAR_NAME) are expanded using the container's environment.
env []core.EnvVar +map=name +smp=name | List of environment variables to set in the container. Cannot be updated.
envFrom []core.EnvFromSource +atomic | List of sources to populate environment variables in the container. When a key exists in multiple sources, the value associated with the last source will take precedence. Cannot be updated.
image string | Container image name. This field is optional to allow higher level config management to default or override container images in workload controllers like Deployments and StatefulSets.
imagePullPolicy string | Image pull policy. One of Always, Never, IfNotPresent. Defaults to Always if :latest tag is specified, or IfNotPresent otherwise. Cannot be updated.
lifecycle object | Actions that the management system should take in response to container lifecycle events. Cannot be updated.
livenessProbe core.Probe | Periodic probe of container liveness. Container will be restarted if the probe fails. Cannot be updated.
name! string | Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name (DNS_LABEL). Cannot be updated.
ports []core.ContainerPort +map=containerPort,protocol +smp=containerPort | List of ports to expose from the container. Not specifying a port here DOES NOT prevent that port from being exposed. Cannot be updated.
readinessProbe core.Probe | Periodic probe of container service readiness. Container will be removed from service endpoints if the probe fails. Cannot be updated.
resizePolicy []object +atomic | Resources resize policy for the container.
resources core.ResourceRequirements +value | Compute Resources required by this container. Cannot be updated.
restartPolicy string | RestartPolicy defines the restart behavior of individual containers in a pod. This field may only be set for init containers, and the only allowed value is "Always".
securityContext object | SecurityContext defines the security options the container should be run with. If set, the fields of SecurityContext override the equivalent fields of PodSecurityContext.
startupProbe core.Probe | StartupProbe indicates that the Pod has successfully initialized. If specified, no other probes are executed until this completes successfully. Cannot be updated.
stdin boolean | Whether this container should allocate a buffer for stdin in the container runtime. If this is not set, reads from stdin in the container will always result in EOF. Default is false.
stdinOnce boolean | Whether the container runtime should close the stdin channel after it has been opened by a single attach. Default is false
terminationMessagePath string | Optional: Path at which the file to which the container's termination message will be written is mounted into the container's filesystem. Defaults to /dev/termination-log. Cannot be updated.
terminationMessagePolicy string | Indicate how the termination message should be populated. File will use the contents of terminationMessagePath to populate the container status message on both success and failure. Defaults to File. Cannot be updated.
tty boolean | Whether this container should allocate a TTY for itself, also requires 'stdin' to be true. Default is false.
volumeDevices []object +map=devicePath +smp=devicePath | volumeDevices is the list of block devices to be used by the container.
volumeMounts []core.VolumeMount +map=mountPath +smp=mountPath | Pod volumes to mount into the container's filesystem. Cannot be updated.
workingDir string | Container's working directory. If not specified, the container runtime's default will be used, which might be configured in the container image. Cannot be updated.

@core.ContainerPort ContainerPort represents a network port in a single container.
containerPort! int32 | Number of port to expose on the pod's IP address. This must be a valid port number, 0 < x < 65536.
hostIP string | What host IP to bind the external port to.
hostPort int32 | Number of port to expose on the host. If specified, this must be a valid port number, 0 < x < 65536.
name string | If specified, this must be an IANA_SVC_NAME and unique within the pod. Each named port in a pod must have a unique name. Name for the port that can be referred to by services.
protocol string | Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".

@core.EnvVar EnvVar represents an environment variable present in a Container.
name! string | Name of the environment variable. Must be a C_IDENTIFIER.
value string | Variable references $(VAR_NAME) are expanded using the previously defined environment variables in the container and any service environment variables. Defaults to "".
valueFrom core.EnvVarSource | Source for the environment variable's value. Cannot be used if value is not empty.

@core.EnvVarSource EnvVarSource represents a source for the value of an EnvVar.
configMapKeyRef core.ConfigMapKeySelector | Selects a key of a ConfigMap.
fieldRef object | Selects a field of the pod: supports metadata.name, metadata.namespace, `metadata.labels['<KEY>']`, `metadata.annotations['<KEY>']`, spec.nodeName, spec.serviceAccountName, status.hostIP, status.podIP, status.podIPs.
resourceFieldRef object | Selects a resource of the container: only resources limits and requests (limits.cpu, limits.memory, limits.ephemeral-storage, requests.cpu, requests.memory and requests.ephemeral-storage) are currently supported.
secretKeyRef core.SecretKeySelector | Selects a key of a secret in the pod's namespace

@core.ConfigMapKeySelector +atomic Selects a key from a ConfigMap.
key! string | The key to select.
name string | Name of the referent. This field is effectively required, but due to backwards compatibility is allowed to be empty.
optional boolean | Specify whether the ConfigMap or its key must be defined

@core.SecretKeySelector +atomic SecretKeySelector selects a key of a Secret.
key! string | The key of the secret to select from. Must be a valid secret key.
name string | Name of the referent. This field is effectively required, but due to backwards compatibility is allowed to be empty.
optional boolean | Specify whether the Secret or its key must be defined

@core.EnvFromSource EnvFromSource represents the source of a set of ConfigMaps or Secrets
configMapRef object | The ConfigMap to select from (name, optional)
prefix string | Optional text to prepend to the name of each environment variable. Must be a C_IDENTIFIER.
secretRef object | The Secret to select from (name, optional)

@core.VolumeMount VolumeMount describes a mounting of a Volume within a container.
mountPath! string | Path within the container at which the volume should be mounted. Must not contain ':'.
mountPropagation string | mountPropagation determines how mounts are propagated from the host to container and the other way around. When not set, MountPropagationNone is used.
name! string | This must match the Name of a Volume.
readOnly boolean | Mounted read-only if true, read-write otherwise (false or unspecified). Defaults to false.
recursiveReadOnly string | RecursiveReadOnly specifies whether read-only mounts should be handled recursively.
subPath string | Path within the volume from which the container's volume should be mounted. Defaults to "" (volume's root).
subPathExpr string | Expanded path within the volume from which the container's volume should be mounted. Behaves similarly to SubPath but environment variable references $(VAR_NAME) are expanded using the container's environment.

@core.Volume Volume represents a named volume in a pod that may be accessed by any container in the pod.
awsElasticBlockStore object | Deprecated: awsElasticBlockStore represents an AWS Disk resource that is attached to a kubelet's host machine and then exposed to the pod.
azureDisk object | Deprecated: azureDisk represents an Azure Data Disk mount on the host and bind mount to the pod.
azureFile object | Deprecated: azureFile represents an Azure File Service mount on the host and bind mount to the pod.
cephfs object | Deprecated: cephFS represents a Ceph FS mount on the host that shares a pod's lifetime.
cinder object | Deprecated: cinder represents a cinder volume attached and mounted on kubelets host machine.
configMap core.ConfigMapVolumeSource | configMap represents a configMap that should populate this volume
csi object | csi (Container Storage Interface) represents ephemeral storage that is handled by certain external CSI drivers.
downwardAPI object | downwardAPI represents downward API about the pod that should populate this volume
emptyDir core.EmptyDirVolumeSource | emptyDir represents a temporary directory that shares a pod's lifetime.
ephemeral object | ephemeral represents a volume that is handled by a cluster storage driver. The volume's lifecycle is tied to the pod that defines it.
fc object | fc represents a Fibre Channel resource that is attached to a kubelet's host machine and then exposed to the pod.
flexVolume object | Deprecated: flexVolume represents a generic volume resource that is provisioned/attached using an exec based plugin.
flocker object | Deprecated: Flocker represents a Flocker volume attached to a kubelet's host machine.
gcePersistentDisk object | Deprecated: gcePersistentDisk represents a GCE Disk resource that is attached to a kubelet's host machine and then exposed to the pod.
gitRepo object | Deprecated: gitRepo represents a git repository at a particular revision.
glusterfs object | Deprecated: glusterfs represents a Glusterfs mount on the host that shares a pod's lifetime.
hostPath core.HostPathVolumeSource | hostPath represents a pre-existing file or directory on the host machine that is directly exposed to the container.
image object | image represents an OCI object (a container image or artifact) pulled and mounted on the kubelet's host machine.
iscsi object | iscsi represents an ISCSI Disk resource that is attached to a kubelet's host machine and then exposed to the pod.
name! string | name of the volume. Must be a DNS_LABEL and unique within the pod.
nfs object | nfs represents an NFS mount on the host that shares a pod's lifetime
persistentVolumeClaim object | persistentVolumeClaimVolumeSource represents a reference to a PersistentVolumeClaim in the same namespace.
photonPersistentDisk object | Deprecated: photonPersistentDisk represents a PhotonController persistent disk attached and mounted on kubelets host machine.
portworxVolume object | Deprecated: portworxVolume represents a portworx volume attached and mounted on kubelets host machine.
projected object | projected items for all in one resources secrets, configmaps, and downward API
quobyte object | Deprecated: quobyte represents a Quobyte mount on the host that shares a pod's lifetime.
rbd object | Deprecated: rbd represents a Rados Block Device mount on the host that shares a pod's lifetime.
scaleIO object | Deprecated: scaleIO represents a ScaleIO persistent volume attached and mounted on Kubernetes nodes.
secret core.SecretVolumeSource | secret represents a secret that should populate this volume.
storageos object | Deprecated: storageOS represents a StorageOS volume attached and mounted on Kubernetes nodes.
vsphereVolume object | Deprecated: vsphereVolume represents a vSphere volume attached and mounted on kubelets host machine.

@core.ConfigMapVolumeSource Adapts a ConfigMap into a volume. The contents of the target ConfigMap's Data field will be presented in a volume as files using the keys in the Data field as the file names, unless the items element is populated with specific mappings of keys to paths.
defaultMode int32 | defaultMode is optional: mode bits used to set permissions on created files by default. Defaults to 0644.
items []core.KeyToPath +atomic | items if unspecified, each key-value pair in the Data field of the referenced ConfigMap will be projected into the volume as a file whose name is the key and content is the value.
name string | Name of the referent.
optional boolean | optional specify whether the ConfigMap or its keys must be defined

@core.SecretVolumeSource Adapts a Secret into a volume. The contents of the target Secret's Data field will be presented in a volume as files using the keys in the Data field as the file names.
defaultMode int32 | defaultMode is Optional: mode bits used to set permissions on created files by default. Defaults to 0644.
items []core.KeyToPath +atomic | items If unspecified, each key-value pair in the Data field of the referenced Secret will be projected into the volume as a file whose name is the key and content is the value.
optional boolean | optional field specify whether the Secret or its keys must be defined
secretName string | secretName is the name of the secret in the pod's namespace to use.

@core.KeyToPath Maps a string key to a path within a volume.
key! string | key is the key to project.
mode int32 | mode is Optional: mode bits used to set permissions on this file.
path! string | path is the relative path of the file to map the key to. May not be an absolute path. May not contain the path element '..'. May not start with the string '..'.

@core.EmptyDirVolumeSource Represents an empty directory for a pod. Empty directory volumes support ownership management and SELinux relabeling.
medium string | medium represents what type of storage medium should back this directory. The default is "" which means to use the node's default medium.
sizeLimit Quantity | sizeLimit is the total amount of local storage required for this EmptyDir volume.

@core.HostPathVolumeSource Represents a host path mapped into a pod. Host path volumes do not support ownership management or SELinux relabeling.
path! string | path of the directory on the host. If the path is a symlink, it will follow the link to the real path.
type string | type for HostPath Volume Defaults to ""

@core.Probe Probe describes a health check to be performed against a container to determine whether it is alive or ready to receive traffic.
exec object | Exec specifies a command to execute in the container.
failureThreshold int32 | Minimum consecutive failures for the probe to be considered failed after having succeeded. Defaults to 3. Minimum value is 1.
grpc object | GRPC specifies a GRPC HealthCheckRequest.
httpGet core.HTTPGetAction | HTTPGet specifies an HTTP GET request to perform.
initialDelaySeconds int32 | Number of seconds after the container has started before liveness probes are initiated.
periodSeconds int32 | How often (in seconds) to perform the probe. Default to 10 seconds. Minimum value is 1.
successThreshold int32 | Minimum consecutive successes for the probe to be considered successful after having failed. Defaults to 1. Must be 1 for liveness and startup. Minimum value is 1.
tcpSocket object | TCPSocket specifies a connection to a TCP port.
terminationGracePeriodSeconds int64 | Optional duration in seconds the pod needs to terminate gracefully upon probe failure.
timeoutSeconds int32 | Number of seconds after which the probe times out. Defaults to 1 second. Minimum value is 1.

@core.HTTPGetAction HTTPGetAction describes an action based on HTTP Get requests.
host string | Host name to connect to, defaults to the pod IP. You probably want to set "Host" in httpHeaders instead.
httpHeaders []object +atomic | Custom headers to set in the request. HTTP allows repeated headers.
path string | Path to access on the HTTP server.
port! IntOrString | Name or number of the port to access on the container. Number must be in the range 1 to 65535. Name must be an IANA_SVC_NAME.
scheme string | Scheme to use for connecting to the host. Defaults to HTTP.

@core.ResourceRequirements ResourceRequirements describes the compute resource requirements.
claims []object +map=name | Claims lists the names of resources, defined in spec.resourceClaims, that are used by this container.
limits {}Quantity | Limits describes the maximum amount of compute resources allowed.
requests {}Quantity | Requests describes the minimum amount of compute resources required. If Requests is omitted for a container, it defaults to Limits if that is explicitly specified, otherwise to an implementation-defined value.

@core.Toleration The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.
effect string | Effect indicates the taint effect to match. Empty means match all taint effects. When specified, allowed values are NoSchedule, PreferNoSchedule and NoExecute.
key string | Key is the taint key that the toleration applies to. Empty means match all taint keys.
operator string | Operator represents a key's relationship to the value. Valid operators are Exists and Equal. Defaults to Equal.
tolerationSeconds int64 | TolerationSeconds represents the period of time the toleration (which must be of effect NoExecute, otherwise this field is ignored) tolerates the taint.
value string | Value is the taint value the toleration matches to. If the operator is Exists, the value should be empty, otherwise just a regular string.

@core.LocalObjectReference +atomic LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.
name string | Name of the referent. This field is effectively required, but due to backwards compatibility is allowed to be empty.

@core.ConfigMap ConfigMap holds configuration data for pods to consume.
apiVersion string | {API_VERSION}
binaryData {}string | BinaryData contains the binary data. Each key must consist of alphanumeric characters, '-', '_' or '.'. BinaryData can contain byte sequences that are not in the UTF-8 range.
data {}string | Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field.
immutable boolean | Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil.
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}

@core.Secret Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.
apiVersion string | {API_VERSION}
data {}string | Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string.
immutable boolean | Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
stringData {}string | stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write.
type string | Used to facilitate programmatic handling of secret data.

@core.Namespace Namespace provides a scope for Names. Use of multiple namespaces is optional.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec object | Spec defines the behavior of the Namespace.
status object | Status describes the current status of a Namespace.

@core.Node Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec object | Spec defines the behavior of a node.
status object | Most recently observed status of the node. Populated by the system. Read-only.

@core.Service Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec core.ServiceSpec +value | Spec defines the behavior of a service.
status object | Most recently observed status of the service. Populated by the system. Read-only.

@core.ServiceSpec ServiceSpec describes the attributes that a user creates on a service.
allocateLoadBalancerNodePorts boolean | allocateLoadBalancerNodePorts defines if NodePorts will be automatically allocated for services with type LoadBalancer. Default is "true".
clusterIP string | clusterIP is the IP address of the service and is usually assigned randomly.
clusterIPs []string +atomic | ClusterIPs is a list of IP addresses assigned to this service, and are usually assigned randomly.
externalIPs []string +atomic | externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.
externalName string | externalName is the external reference that discovery mechanisms will return as an alias for this service (e.g. a DNS CNAME record). Requires `type` to be "ExternalName".
externalTrafficPolicy string | externalTrafficPolicy describes how nodes distribute service traffic they receive on one of the Service's "externally-facing" addresses.
healthCheckNodePort int32 | healthCheckNodePort specifies the healthcheck nodePort for the service.
internalTrafficPolicy string | InternalTrafficPolicy describes how nodes distribute service traffic they receive on the ClusterIP.
ipFamilies []string +atomic | IPFamilies is a list of IP families (e.g. IPv4, IPv6) assigned to this service.
ipFamilyPolicy string | IPFamilyPolicy represents the dual-stack-ness requested or required by this Service.
loadBalancerClass string | loadBalancerClass is the class of the load balancer implementation this Service belongs to.
loadBalancerIP string | Only applies to Service Type: LoadBalancer. Deprecated: This field was under-specified and its meaning varies across implementations.
loadBalancerSourceRanges []string +atomic | If specified and supported by the platform, this will restrict traffic through the cloud-provider load-balancer will be restricted to the specified client IPs.
ports []core.ServicePort +map=port,protocol +smp=port | The list of ports that are exposed by this service.
publishNotReadyAddresses boolean | publishNotReadyAddresses indicates that any agent which deals with endpoints for this Service should disregard any indications of ready/not-ready.
selector {}string +atomic | Route service traffic to pods with label keys and values matching this selector.
sessionAffinity string | Supports "ClientIP" and "None". Used to maintain session affinity. Defaults to None.
sessionAffinityConfig object | sessionAffinityConfig contains the configurations of session affinity.
trafficDistribution string | TrafficDistribution offers a way to express preferences for how traffic is distributed to Service endpoints.
type string | type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.

@core.ServicePort ServicePort contains information on service's port.
appProtocol string | The application protocol for this port. This is used as a hint for implementations to offer richer behavior for protocols that they understand.
name string | The name of this port within the service. This must be a DNS_LABEL. All ports within a ServiceSpec must have unique names.
nodePort int32 | The port on each node on which this service is exposed when type is NodePort or LoadBalancer.
port! int32 | The port that will be exposed by this service.
protocol string | The IP protocol for this port. Supports "TCP", "UDP", and "SCTP". Default is TCP.
targetPort IntOrString | Number or name of the port to access on the pods targeted by the service. Number must be in the range 1 to 65535.

@core.Endpoints Endpoints is a collection of endpoints that implement the actual service.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
subsets []object +atomic | The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share.

@core.Event ~ Event is a report of an event somewhere in the cluster. Events have a limited retention time and triggers and messages may evolve with time.
action string | What action was taken/failed regarding to the Regarding object.
apiVersion string | {API_VERSION}
count int32 | The number of times this event has occurred.
eventTime object | Time when this Event was first observed.
firstTimestamp Time | The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)
involvedObject! object | The object that this event is about.
kind string | {KIND}
lastTimestamp Time | The time at which the most recent occurrence of this event was recorded.
message string | A human-readable description of the status of this operation.
metadata! meta.ObjectMeta +value | {METADATA}
reason string | This should be a short, machine understandable string that gives the reason for the transition into the object's current status.
related object | Optional secondary object for more complex actions.
reportingComponent string | Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.
reportingInstance string | ID of the controller instance, e.g. `kubelet-xyzf`.
series object | Data about the Event series this event represents or nil if it's a singleton Event.
source object | The component reporting this event. Should be a short machine understandable string.
type string | Type of this event (Normal, Warning), new types could be added in the future

@core.ServiceAccount ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets
apiVersion string | {API_VERSION}
automountServiceAccountToken boolean | AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.
imagePullSecrets []core.LocalObjectReference +atomic | ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
secrets []object +map=name +smp=name | Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.

@core.PersistentVolumeClaim PersistentVolumeClaim is a user's request for and claim to a persistent volume
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec core.PersistentVolumeClaimSpec +value | spec defines the desired characteristics of a volume requested by a pod author.
status object | status represents the current information/status of a persistent volume claim. Read-only.

@core.PersistentVolumeClaimSpec PersistentVolumeClaimSpec describes the common attributes of storage devices and allows a Source for provider-specific attributes
accessModes []string +atomic | accessModes contains the desired access modes the volume should have.
dataSource object | dataSource field can be used to specify either an existing VolumeSnapshot object or an existing PVC.
dataSourceRef object | dataSourceRef specifies the object from which to populate the volume with data, if a non-empty volume is desired.
resources object | resources represents the minimum resources the volume should have.
selector object | selector is a label query over volumes to consider for binding.
storageClassName string | storageClassName is the name of the StorageClass required by the claim.
volumeAttributesClassName string | volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.
volumeMode string | volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.
volumeName string | volumeName is the binding reference to the PersistentVolume backing this claim.

@core.PersistentVolume PersistentVolume (PV) is a storage resource provisioned by an administrator. It is analogous to a node.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
spec core.PersistentVolumeSpec +value | spec defines a specification of a persistent volume owned by the cluster. Provisioned by an administrator.
status object | status represents the current information/status for the persistent volume. Populated by the system. Read-only.

@core.PersistentVolumeSpec PersistentVolumeSpec is the specification of a persistent volume.
accessModes []string +atomic | accessModes contains all ways the volume can be mounted.
capacity {}Quantity | capacity is the description of the persistent volume's resources and capacity.
claimRef object | claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.
csi object | csi represents storage that is handled by an external CSI driver.
hostPath object | hostPath represents a directory on the host. Provisioned by a developer or tester.
local object | local represents directly-attached storage with node affinity
mountOptions []string +atomic | mountOptions is the list of mount options, e.g. ["ro", "soft"]. Not validated - mount will simply fail if one is invalid.
nfs object | nfs represents an NFS mount on the host. Provisioned by an admin.
nodeAffinity object | nodeAffinity defines constraints that limit what nodes this volume can be accessed from.
persistentVolumeReclaimPolicy string | persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated).
storageClassName string | storageClassName is the name of StorageClass to which this persistent volume belongs. Empty value means that this volume does not belong to any StorageClass.
volumeAttributesClassName string | Name of VolumeAttributesClass to which this persistent volume belongs.
volumeMode string | volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.

@storage.StorageClass StorageClass describes the parameters for a class of storage for which PersistentVolumes can be dynamically provisioned.
allowVolumeExpansion boolean | allowVolumeExpansion shows whether the storage class allow volume expand.
allowedTopologies []object +atomic | allowedTopologies restrict the node topologies where volumes can be dynamically provisioned.
apiVersion string | {API_VERSION}
kind string | {KIND}
metadata meta.ObjectMeta +value | {METADATA}
mountOptions []string +atomic | mountOptions controls the mountOptions for dynamically provisioned PersistentVolumes of this storage class.
parameters {}string | parameters holds the parameters for the provisioner that should create volumes of this storage class.
provisioner! string | provisioner indicates the type of the provisioner.
reclaimPolicy string | reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.
volumeBindingMode string | volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound. When unset, VolumeBindingImmediate is used.
"""
