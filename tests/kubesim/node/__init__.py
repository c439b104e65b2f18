"""What runs on a node: the kubelet, its ConfigMap/Secret cache, volumes, env, readiness probes,
containers as real processes, and each pod's network namespace."""
