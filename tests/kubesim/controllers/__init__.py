"""kube-controller-manager and the scheduler: Deployment, ReplicaSet, StatefulSet, DaemonSet,
Endpoints and garbage collection, event driven."""
