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


_DECIMAL = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0), ("m", -3), ("u", -6), ("n", -9))
_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def binary(text: object) -> bool:
    """Whether a quantity is written in the BinarySI format (`128Mi`), which sums keep."""
    return isinstance(text, str) and text.strip()[-2:] in {s for s, _ in _BINARY}


def canonical(value: Fraction, *, binary_si: bool = False) -> str:
    """Quantity.String(): the largest suffix that keeps the number whole (`1500m`, `2k`,
    `128Mi`); BinarySI only for whole multiples of 1024, else DecimalSI (quantity.go
    CanonicalizeBytes). Values below a nano are rounded up to it, as the apiserver does."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if binary_si and value.denominator == 1 and value >= 1024:
        for suffix, shift in _BINARY:
            if value.numerator % (1 << shift) == 0:
                return f"{sign}{value.numerator >> shift}{suffix}"
    nanos = math.ceil(value * 10**9)
    for suffix, exp in _DECIMAL:
        scale = 10 ** (exp + 9)
        if nanos % scale == 0:
            return f"{sign}{nanos // scale}{suffix}"
    return f"{sign}{nanos}n"
