"""kubesim: an emulated Kubernetes cluster on loopback for the test suite and the benchmarks.

Import it from here::

    from tests.kubesim import Cluster, Fault, Knobs, Rule
"""

from .auth import Rule
from .cluster import Cluster, Fault, Knobs

__all__ = ["Cluster", "Fault", "Knobs", "Rule"]
