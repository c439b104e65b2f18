"""resource.Quantity as the scheduler and kubelet read it (apimachinery/pkg/api/resource
quantity.go ParseQuantity): `100m`, `0.5`, `128Mi`, `1G`, `1e3` to exact numbers. Pure logic."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_SUFFIX = {
    "": 1,
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)")


class BadQuantity(ValueError):
    """`quantities must match the regular expression ...` (the apiserver's 422 for a bad value)."""


@lru_cache(maxsize=4096)
def _parse(text: str) -> Fraction:
    m = _QUANTITY.fullmatch(text.strip())
    if not m:
        raise BadQuantity(text)
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def parse(value: object) -> Fraction:
    """The quantity's exact value (cores for cpu, bytes for memory)."""
    if isinstance(value, bool):
        raise BadQuantity(str(value))
    if isinstance(value, int | float):
        return Fraction(value)
    return _parse(str(value))


def milli(value: object) -> int:
    """MilliValue(): rounded up, as the scheduler counts cpu."""
    return math.ceil(parse(value) * 1000)


def whole(value: object) -> int:
    """Value(): rounded up, as the scheduler counts memory, storage and the rest."""
    return math.ceil(parse(value))
