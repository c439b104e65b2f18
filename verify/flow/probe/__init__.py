"""The probes: one exec per container (probe.sh) and HTTP checks through the pod proxy."""
