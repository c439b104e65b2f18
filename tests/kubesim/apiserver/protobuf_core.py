"""Field tables for the core/v1 kinds kubectl's typed commands send as protobuf beyond the
workloads (protobuf_kinds.py): `kubectl create service clusterip|nodeport|loadbalancer|
externalname` (Service), `kubectl debug --copy-to` and `kubectl debug node/...` (a whole Pod,
every field its spec may carry). protobuf_body.py decodes with them.

Field numbers and JSON names are those of k8s.io/api core/v1/generated.proto (kubernetes/
kubernetes staging/src/k8s.io/api), read into kubesim's
notation: `NUMBER:jsonName:TYPE`, TYPE one of s (string), i (int32/int64), b (bool), bytes,
map (map<string,string>), map:bytes, map:Quantity, quantity (resource.Quantity), intstr, time,
or a message; `*` repeated; `^` an embedded Go struct (`json:""`), whose fields are the
parent's in JSON (a Volume's source, a Probe's handler, a key selector's name). Statuses are
the server's to fill and are not read. KEEP_ZERO: pointer fields (Go `*bool`, `*int64`, ...),
written only when set, so an explicit false or 0 is kept (core/v1 types.go)."""

from __future__ import annotations

_TABLES = {
    "Pod": "1:metadata:ObjectMeta 2:spec:PodSpec",
    "PodSpec": (
        "1:volumes:Volume* 20:initContainers:Container* 2:containers:Container* "
        "34:ephemeralContainers:EphemeralContainer* 3:restartPolicy:s 4:terminationGracePeriodSeconds:i "
        "5:activeDeadlineSeconds:i 6:dnsPolicy:s 7:nodeSelector:map 8:serviceAccountName:s "
        "9:serviceAccount:s 21:automountServiceAccountToken:b 10:nodeName:s 11:hostNetwork:b 12:hostPID:b "
        "13:hostIPC:b 27:shareProcessNamespace:b 14:securityContext:PodSecurityContext "
        "15:imagePullSecrets:LocalObjectReference* 16:hostname:s 17:subdomain:s 18:affinity:Affinity "
        "19:schedulerName:s 22:tolerations:Toleration* 23:hostAliases:HostAlias* 24:priorityClassName:s "
        "25:priority:i 26:dnsConfig:PodDNSConfig 28:readinessGates:PodReadinessGate* "
        "29:runtimeClassName:s 30:enableServiceLinks:b 31:preemptionPolicy:s 32:overhead:map:Quantity "
        "33:topologySpreadConstraints:TopologySpreadConstraint* 35:setHostnameAsFQDN:b 36:os:PodOS "
        "37:hostUsers:b 38:schedulingGates:PodSchedulingGate* 39:resourceClaims:PodResourceClaim* "
        "40:resources:ResourceRequirements 41:hostnameOverride:s 43:schedulingGroup:PodSchedulingGroup "
        "44:evictionResponders:EvictionResponder*"
    ),
    "Volume": "1:name:s 2:volumeSource:VolumeSource^",
    "VolumeSource": (
        "1:hostPath:HostPathVolumeSource 2:emptyDir:EmptyDirVolumeSource "
        "3:gcePersistentDisk:GCEPersistentDiskVolumeSource "
        "4:awsElasticBlockStore:AWSElasticBlockStoreVolumeSource 5:gitRepo:GitRepoVolumeSource "
        "6:secret:SecretVolumeSource 7:nfs:NFSVolumeSource 8:iscsi:ISCSIVolumeSource "
        "9:glusterfs:GlusterfsVolumeSource 10:persistentVolumeClaim:PersistentVolumeClaimVolumeSource "
        "11:rbd:RBDVolumeSource 12:flexVolume:FlexVolumeSource 13:cinder:CinderVolumeSource "
        "14:cephfs:CephFSVolumeSource 15:flocker:FlockerVolumeSource "
        "16:downwardAPI:DownwardAPIVolumeSource 17:fc:FCVolumeSource 18:azureFile:AzureFileVolumeSource "
        "19:configMap:ConfigMapVolumeSource 20:vsphereVolume:VsphereVirtualDiskVolumeSource "
        "21:quobyte:QuobyteVolumeSource 22:azureDisk:AzureDiskVolumeSource "
        "23:photonPersistentDisk:PhotonPersistentDiskVolumeSource 26:projected:ProjectedVolumeSource "
        "24:portworxVolume:PortworxVolumeSource 25:scaleIO:ScaleIOVolumeSource "
        "27:storageos:StorageOSVolumeSource 28:csi:CSIVolumeSource 29:ephemeral:EphemeralVolumeSource "
        "30:image:ImageVolumeSource"
    ),
    "HostPathVolumeSource": "1:path:s 2:type:s",
    "EmptyDirVolumeSource": "1:medium:s 2:sizeLimit:quantity 3:mode:i",
    "GCEPersistentDiskVolumeSource": "1:pdName:s 2:fsType:s 3:partition:i 4:readOnly:b",
    "AWSElasticBlockStoreVolumeSource": "1:volumeID:s 2:fsType:s 3:partition:i 4:readOnly:b",
    "GitRepoVolumeSource": "1:repository:s 2:revision:s 3:directory:s",
    "SecretVolumeSource": "1:secretName:s 2:items:KeyToPath* 3:defaultMode:i 4:optional:b 5:defaultUser:i",
    "KeyToPath": "1:key:s 2:path:s 3:mode:i 4:user:i",
    "NFSVolumeSource": "1:server:s 2:path:s 3:readOnly:b",
    "ISCSIVolumeSource": (
        "1:targetPortal:s 2:iqn:s 3:lun:i 4:iscsiInterface:s 5:fsType:s 6:readOnly:b 7:portals:s* "
        "8:chapAuthDiscovery:b 11:chapAuthSession:b 10:secretRef:LocalObjectReference 12:initiatorName:s"
    ),
    "LocalObjectReference": "1:name:s",
    "GlusterfsVolumeSource": "1:endpoints:s 2:path:s 3:readOnly:b",
    "PersistentVolumeClaimVolumeSource": "1:claimName:s 2:readOnly:b",
    "RBDVolumeSource": (
        "1:monitors:s* 2:image:s 3:fsType:s 4:pool:s 5:user:s 6:keyring:s "
        "7:secretRef:LocalObjectReference 8:readOnly:b"
    ),
    "FlexVolumeSource": "1:driver:s 2:fsType:s 3:secretRef:LocalObjectReference 4:readOnly:b 5:options:map",
    "CinderVolumeSource": "1:volumeID:s 2:fsType:s 3:readOnly:b 4:secretRef:LocalObjectReference",
    "CephFSVolumeSource": (
        "1:monitors:s* 2:path:s 3:user:s 4:secretFile:s 5:secretRef:LocalObjectReference 6:readOnly:b"
    ),
    "FlockerVolumeSource": "1:datasetName:s 2:datasetUUID:s",
    "DownwardAPIVolumeSource": "1:items:DownwardAPIVolumeFile* 2:defaultMode:i 3:defaultUser:i",
    "DownwardAPIVolumeFile": (
        "1:path:s 2:fieldRef:ObjectFieldSelector 3:resourceFieldRef:ResourceFieldSelector 4:mode:i "
        "5:user:i"
    ),
    "ObjectFieldSelector": "1:apiVersion:s 2:fieldPath:s",
    "ResourceFieldSelector": "1:containerName:s 2:resource:s 3:divisor:quantity",
    "FCVolumeSource": "1:targetWWNs:s* 2:lun:i 3:fsType:s 4:readOnly:b 5:wwids:s*",
    "AzureFileVolumeSource": "1:secretName:s 2:shareName:s 3:readOnly:b",
    "ConfigMapVolumeSource": (
        "1:localObjectReference:LocalObjectReference^ 2:items:KeyToPath* 3:defaultMode:i 4:optional:b "
        "5:defaultUser:i"
    ),
    "VsphereVirtualDiskVolumeSource": "1:volumePath:s 2:fsType:s 3:storagePolicyName:s 4:storagePolicyID:s",
    "QuobyteVolumeSource": "1:registry:s 2:volume:s 3:readOnly:b 4:user:s 5:group:s 6:tenant:s",
    "AzureDiskVolumeSource": "1:diskName:s 2:diskURI:s 3:cachingMode:s 4:fsType:s 5:readOnly:b 6:kind:s",
    "PhotonPersistentDiskVolumeSource": "1:pdID:s 2:fsType:s",
    "ProjectedVolumeSource": "1:sources:VolumeProjection* 2:defaultMode:i 3:defaultUser:i",
    "VolumeProjection": (
        "1:secret:SecretProjection 2:downwardAPI:DownwardAPIProjection 3:configMap:ConfigMapProjection "
        "4:serviceAccountToken:ServiceAccountTokenProjection "
        "5:clusterTrustBundle:ClusterTrustBundleProjection 6:podCertificate:PodCertificateProjection"
    ),
    "SecretProjection": "1:localObjectReference:LocalObjectReference^ 2:items:KeyToPath* 4:optional:b",
    "DownwardAPIProjection": "1:items:DownwardAPIVolumeFile*",
    "ConfigMapProjection": "1:localObjectReference:LocalObjectReference^ 2:items:KeyToPath* 4:optional:b",
    "ServiceAccountTokenProjection": "1:audience:s 2:expirationSeconds:i 3:path:s 4:user:i",
    "ClusterTrustBundleProjection": (
        "1:name:s 2:signerName:s 3:labelSelector:LabelSelector 5:optional:b 4:path:s 6:user:i"
    ),
    "PodCertificateProjection": (
        "1:signerName:s 2:keyType:s 3:maxExpirationSeconds:i 4:credentialBundlePath:s 5:keyPath:s "
        "6:certificateChainPath:s 7:userAnnotations:map 8:user:i"
    ),
    "PortworxVolumeSource": "1:volumeID:s 2:fsType:s 3:readOnly:b",
    "ScaleIOVolumeSource": (
        "1:gateway:s 2:system:s 3:secretRef:LocalObjectReference 4:sslEnabled:b 5:protectionDomain:s "
        "6:storagePool:s 7:storageMode:s 8:volumeName:s 9:fsType:s 10:readOnly:b"
    ),
    "StorageOSVolumeSource": (
        "1:volumeName:s 2:volumeNamespace:s 3:fsType:s 4:readOnly:b 5:secretRef:LocalObjectReference"
    ),
    "CSIVolumeSource": (
        "1:driver:s 2:readOnly:b 3:fsType:s 4:volumeAttributes:map "
        "5:nodePublishSecretRef:LocalObjectReference"
    ),
    "EphemeralVolumeSource": "1:volumeClaimTemplate:PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimTemplate": "1:metadata:ObjectMeta 2:spec:PersistentVolumeClaimSpec",
    "PersistentVolumeClaimSpec": (
        "1:accessModes:s* 4:selector:LabelSelector 2:resources:VolumeResourceRequirements 3:volumeName:s "
        "5:storageClassName:s 6:volumeMode:s 7:dataSource:TypedLocalObjectReference "
        "8:dataSourceRef:TypedObjectReference 9:volumeAttributesClassName:s"
    ),
    "VolumeResourceRequirements": "1:limits:map:Quantity 2:requests:map:Quantity",
    "TypedLocalObjectReference": "1:apiGroup:s 2:kind:s 3:name:s",
    "TypedObjectReference": "1:apiGroup:s 2:kind:s 3:name:s 4:namespace:s",
    "ImageVolumeSource": "1:reference:s 2:pullPolicy:s",
    "Container": (
        "1:name:s 2:image:s 3:command:s* 4:args:s* 5:workingDir:s 6:ports:ContainerPort* "
        "19:envFrom:EnvFromSource* 7:env:EnvVar* 8:resources:ResourceRequirements "
        "23:resizePolicy:ContainerResizePolicy* 24:restartPolicy:s "
        "25:restartPolicyRules:ContainerRestartRule* 9:volumeMounts:VolumeMount* "
        "21:volumeDevices:VolumeDevice* 10:livenessProbe:Probe 11:readinessProbe:Probe "
        "22:startupProbe:Probe 12:lifecycle:Lifecycle 13:terminationMessagePath:s "
        "20:terminationMessagePolicy:s 14:imagePullPolicy:s 15:securityContext:SecurityContext 16:stdin:b "
        "17:stdinOnce:b 18:tty:b"
    ),
    "ContainerPort": "1:name:s 2:hostPort:i 3:containerPort:i 4:protocol:s 5:hostIP:s",
    "EnvFromSource": "1:prefix:s 2:configMapRef:ConfigMapEnvSource 3:secretRef:SecretEnvSource",
    "ConfigMapEnvSource": "1:localObjectReference:LocalObjectReference^ 2:optional:b",
    "SecretEnvSource": "1:localObjectReference:LocalObjectReference^ 2:optional:b",
    "EnvVar": "1:name:s 2:value:s 3:valueFrom:EnvVarSource",
    "EnvVarSource": (
        "1:fieldRef:ObjectFieldSelector 2:resourceFieldRef:ResourceFieldSelector "
        "3:configMapKeyRef:ConfigMapKeySelector 4:secretKeyRef:SecretKeySelector "
        "5:fileKeyRef:FileKeySelector"
    ),
    "ConfigMapKeySelector": "1:localObjectReference:LocalObjectReference^ 2:key:s 3:optional:b",
    "SecretKeySelector": "1:localObjectReference:LocalObjectReference^ 2:key:s 3:optional:b",
    "FileKeySelector": "1:volumeName:s 2:path:s 3:key:s 4:optional:b",
    "ResourceRequirements": "1:limits:map:Quantity 2:requests:map:Quantity 3:claims:ResourceClaim*",
    "ResourceClaim": "1:name:s 2:request:s",
    "ContainerResizePolicy": "1:resourceName:s 2:restartPolicy:s",
    "ContainerRestartRule": "1:action:s 2:exitCodes:ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "1:operator:s 2:values:i*",
    "VolumeMount": (
        "1:name:s 2:readOnly:b 7:recursiveReadOnly:s 3:mountPath:s 4:subPath:s 5:mountPropagation:s "
        "6:subPathExpr:s 8:bindMountOptions:s*"
    ),
    "VolumeDevice": "1:name:s 2:devicePath:s",
    "Probe": (
        "1:handler:ProbeHandler^ 2:initialDelaySeconds:i 3:timeoutSeconds:i 4:periodSeconds:i "
        "5:successThreshold:i 6:failureThreshold:i 7:terminationGracePeriodSeconds:i"
    ),
    "ProbeHandler": "1:exec:ExecAction 2:httpGet:HTTPGetAction 3:tcpSocket:TCPSocketAction 4:grpc:GRPCAction",
    "ExecAction": "1:command:s*",
    "HTTPGetAction": "1:path:s 2:port:intstr 3:host:s 4:scheme:s 5:httpHeaders:HTTPHeader* 6:protocol:s",
    "HTTPHeader": "1:name:s 2:value:s",
    "TCPSocketAction": "1:port:intstr 2:host:s",
    "GRPCAction": "1:port:i 2:service:s 3:mode:s",
    "Lifecycle": "1:postStart:LifecycleHandler 2:preStop:LifecycleHandler 3:stopSignal:s",
    "LifecycleHandler": (
        "1:exec:ExecAction 2:httpGet:HTTPGetAction 3:tcpSocket:TCPSocketAction 4:sleep:SleepAction"
    ),
    "SleepAction": "1:seconds:i",
    "SecurityContext": (
        "1:capabilities:Capabilities 2:privileged:b 3:seLinuxOptions:SELinuxOptions "
        "10:windowsOptions:WindowsSecurityContextOptions 4:runAsUser:i 8:runAsGroup:i 5:runAsNonRoot:b "
        "6:readOnlyRootFilesystem:b 7:allowPrivilegeEscalation:b 9:procMount:s "
        "11:seccompProfile:SeccompProfile 12:appArmorProfile:AppArmorProfile"
    ),
    "Capabilities": "1:add:s* 2:drop:s*",
    "SELinuxOptions": "1:user:s 2:role:s 3:type:s 4:level:s",
    "WindowsSecurityContextOptions": (
        "1:gmsaCredentialSpecName:s 2:gmsaCredentialSpec:s 3:runAsUserName:s 4:hostProcess:b"
    ),
    "SeccompProfile": "1:type:s 2:localhostProfile:s",
    "AppArmorProfile": "1:type:s 2:localhostProfile:s",
    "EphemeralContainer": "1:ephemeralContainerCommon:EphemeralContainerCommon^ 2:targetContainerName:s",
    "PodSecurityContext": (
        "1:seLinuxOptions:SELinuxOptions 8:windowsOptions:WindowsSecurityContextOptions 2:runAsUser:i "
        "6:runAsGroup:i 3:runAsNonRoot:b 4:supplementalGroups:i* 12:supplementalGroupsPolicy:s "
        "5:fsGroup:i 7:sysctls:Sysctl* 9:fsGroupChangePolicy:s 10:seccompProfile:SeccompProfile "
        "11:appArmorProfile:AppArmorProfile 13:seLinuxChangePolicy:s"
    ),
    "Sysctl": "1:name:s 2:value:s",
    "Affinity": "1:nodeAffinity:NodeAffinity 2:podAffinity:PodAffinity 3:podAntiAffinity:PodAntiAffinity",
    "NodeAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:NodeSelector "
        "2:preferredDuringSchedulingIgnoredDuringExecution:PreferredSchedulingTerm*"
    ),
    "NodeSelector": "1:nodeSelectorTerms:NodeSelectorTerm*",
    "NodeSelectorTerm": "1:matchExpressions:NodeSelectorRequirement* 2:matchFields:NodeSelectorRequirement*",
    "NodeSelectorRequirement": "1:key:s 2:operator:s 3:values:s*",
    "PreferredSchedulingTerm": "1:weight:i 2:preference:NodeSelectorTerm",
    "PodAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:PodAffinityTerm* "
        "2:preferredDuringSchedulingIgnoredDuringExecution:WeightedPodAffinityTerm*"
    ),
    "PodAffinityTerm": (
        "1:labelSelector:LabelSelector 2:namespaces:s* 3:topologyKey:s 4:namespaceSelector:LabelSelector "
        "5:matchLabelKeys:s* 6:mismatchLabelKeys:s*"
    ),
    "WeightedPodAffinityTerm": "1:weight:i 2:podAffinityTerm:PodAffinityTerm",
    "PodAntiAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:PodAffinityTerm* "
        "2:preferredDuringSchedulingIgnoredDuringExecution:WeightedPodAffinityTerm*"
    ),
    "Toleration": "1:key:s 2:operator:s 3:value:s 4:effect:s 5:tolerationSeconds:i",
    "HostAlias": "1:ip:s 2:hostnames:s*",
    "PodDNSConfig": "1:nameservers:s* 2:searches:s* 3:options:PodDNSConfigOption*",
    "PodDNSConfigOption": "1:name:s 2:value:s",
    "PodReadinessGate": "1:conditionType:s",
    "TopologySpreadConstraint": (
        "1:maxSkew:i 2:topologyKey:s 3:whenUnsatisfiable:s 4:labelSelector:LabelSelector 5:minDomains:i "
        "6:nodeAffinityPolicy:s 7:nodeTaintsPolicy:s 8:matchLabelKeys:s*"
    ),
    "PodOS": "1:name:s",
    "PodSchedulingGate": "1:name:s",
    "PodResourceClaim": "1:name:s 3:resourceClaimName:s 4:resourceClaimTemplateName:s",
    "PodSchedulingGroup": "1:podGroupName:s",
    "EvictionResponder": "1:name:s 2:priority:i",
    "Service": "1:metadata:ObjectMeta 2:spec:ServiceSpec",
    "ServiceSpec": (
        "1:ports:ServicePort* 2:selector:map 3:clusterIP:s 18:clusterIPs:s* 4:type:s 5:externalIPs:s* "
        "7:sessionAffinity:s 8:loadBalancerIP:s 9:loadBalancerSourceRanges:s* 10:externalName:s "
        "11:externalTrafficPolicy:s 12:healthCheckNodePort:i 13:publishNotReadyAddresses:b "
        "14:sessionAffinityConfig:SessionAffinityConfig 19:ipFamilies:s* 17:ipFamilyPolicy:s "
        "20:allocateLoadBalancerNodePorts:b 21:loadBalancerClass:s 22:internalTrafficPolicy:s "
        "23:trafficDistribution:s"
    ),
    "ServicePort": "1:name:s 2:protocol:s 6:appProtocol:s 3:port:i 4:targetPort:intstr 5:nodePort:i",
    "SessionAffinityConfig": "1:clientIP:ClientIPConfig",
    "ClientIPConfig": "1:timeoutSeconds:i",
}

# EphemeralContainerCommon is a copy of Container's fields, numbers included (core/v1 types.go)
_TABLES["EphemeralContainerCommon"] = _TABLES["Container"]

KINDS = {"Pod", "Service"}

KEEP_ZERO = {
    "AppArmorProfile.localhostProfile", "AzureDiskVolumeSource.fsType", "AzureDiskVolumeSource.readOnly",
    "CSIVolumeSource.fsType", "CSIVolumeSource.readOnly", "ClientIPConfig.timeoutSeconds",
    "ClusterTrustBundleProjection.name", "ClusterTrustBundleProjection.optional",
    "ClusterTrustBundleProjection.signerName", "ClusterTrustBundleProjection.user",
    "ConfigMapEnvSource.optional", "ConfigMapKeySelector.optional", "ConfigMapProjection.optional",
    "ConfigMapVolumeSource.defaultMode", "ConfigMapVolumeSource.defaultUser",
    "ConfigMapVolumeSource.optional", "Container.restartPolicy", "DownwardAPIVolumeFile.mode",
    "DownwardAPIVolumeFile.user", "DownwardAPIVolumeSource.defaultMode",
    "DownwardAPIVolumeSource.defaultUser", "EmptyDirVolumeSource.mode",
    "EphemeralContainerCommon.restartPolicy", "EvictionResponder.priority", "FCVolumeSource.lun",
    "FileKeySelector.optional", "GRPCAction.service", "HostPathVolumeSource.type",
    "ISCSIVolumeSource.initiatorName", "KeyToPath.mode", "KeyToPath.user",
    "PersistentVolumeClaimSpec.storageClassName", "PersistentVolumeClaimSpec.volumeAttributesClassName",
    "PersistentVolumeClaimSpec.volumeMode", "PodCertificateProjection.maxExpirationSeconds",
    "PodCertificateProjection.user", "PodDNSConfigOption.value", "PodResourceClaim.resourceClaimName",
    "PodResourceClaim.resourceClaimTemplateName", "PodSchedulingGroup.podGroupName",
    "PodSecurityContext.fsGroup", "PodSecurityContext.fsGroupChangePolicy", "PodSecurityContext.runAsGroup",
    "PodSecurityContext.runAsNonRoot", "PodSecurityContext.runAsUser",
    "PodSecurityContext.supplementalGroupsPolicy", "PodSpec.activeDeadlineSeconds",
    "PodSpec.automountServiceAccountToken", "PodSpec.enableServiceLinks", "PodSpec.hostUsers",
    "PodSpec.hostnameOverride", "PodSpec.preemptionPolicy", "PodSpec.priority", "PodSpec.runtimeClassName",
    "PodSpec.setHostnameAsFQDN", "PodSpec.shareProcessNamespace", "PodSpec.terminationGracePeriodSeconds",
    "Probe.terminationGracePeriodSeconds", "ProjectedVolumeSource.defaultMode",
    "ProjectedVolumeSource.defaultUser", "SeccompProfile.localhostProfile", "SecretEnvSource.optional",
    "SecretKeySelector.optional", "SecretProjection.optional", "SecretVolumeSource.defaultMode",
    "SecretVolumeSource.defaultUser", "SecretVolumeSource.optional",
    "SecurityContext.allowPrivilegeEscalation", "SecurityContext.privileged", "SecurityContext.procMount",
    "SecurityContext.readOnlyRootFilesystem", "SecurityContext.runAsGroup", "SecurityContext.runAsNonRoot",
    "SecurityContext.runAsUser", "ServiceAccountTokenProjection.expirationSeconds",
    "ServiceAccountTokenProjection.user", "ServicePort.appProtocol",
    "ServiceSpec.allocateLoadBalancerNodePorts", "ServiceSpec.internalTrafficPolicy",
    "ServiceSpec.ipFamilyPolicy", "ServiceSpec.loadBalancerClass", "ServiceSpec.trafficDistribution",
    "Toleration.tolerationSeconds", "TopologySpreadConstraint.minDomains",
    "TopologySpreadConstraint.nodeAffinityPolicy", "TopologySpreadConstraint.nodeTaintsPolicy",
    "TypedLocalObjectReference.apiGroup", "TypedObjectReference.apiGroup", "TypedObjectReference.namespace",
    "VolumeMount.mountPropagation", "VolumeMount.recursiveReadOnly",
    "WindowsSecurityContextOptions.gmsaCredentialSpec",
    "WindowsSecurityContextOptions.gmsaCredentialSpecName", "WindowsSecurityContextOptions.hostProcess",
    "WindowsSecurityContextOptions.runAsUserName",
}


def _parse(spec: str) -> dict[int, tuple[str, str, bool]]:
    """`NUMBER:name:TYPE` tokens -> {number: (JSON name, type, repeated)}; an embedded struct's
    JSON name is "" (its fields are merged into the parent's)."""
    out: dict[int, tuple[str, str, bool]] = {}
    for token in spec.split():
        number, name, kind = token.split(":", 2)
        inline = kind.endswith("^")
        kind = kind.rstrip("^")
        repeated = kind.endswith("*")
        out[int(number)] = ("" if inline else name, kind.rstrip("*"), repeated)
    return out


_SCALARS = {"s": "string", "i": "int", "b": "bool"}
SCHEMAS: dict[str, dict[int, tuple[str, str, bool]]] = {
    name: {n: (k, _SCALARS.get(t, t), r) for n, (k, t, r) in _parse(spec).items()}
    for name, spec in _TABLES.items()
}
