"""kubesim: an emulated Kubernetes cluster on loopback for the test suite and the benchmarks.

Import it from here::

    from tests.kubesim import Cluster, Fault, Knobs, Rule
"""

from .apiserver.auth import Rule
from .cluster import Cluster
from .knobs import Fault, Knobs

__all__ = ["Cluster", "Fault", "Knobs", "Rule"]
