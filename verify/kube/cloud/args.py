"""A cloud plugin's argv as its own flag parser reads it (`--flag value`, `--flag=value`, a
boolean `--flag` or `--flag=BOOL` with strconv.ParseBool's spellings), for the three minters: one
splitter, so EKS, AKS and GKE cannot disagree on what a flag is. Anything not understood means the
command is not minted here (plugins.run's "not installed" line stays)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

# strconv.ParseBool, which pflag's (and Go flag's) booleans use
TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# a valued flag given last, with no value: "empty" takes "" (awscli's and aws-iam-authenticator's
# request then lacks the field and is refused by the caller's own checks), "refuse" is not a
# command this parser understands (pflag: "flag needs an argument")
Missing = Literal["empty", "refuse"]


@dataclass(frozen=True)
class Split:
    positional: tuple[str, ...]
    values: dict[str, str] = field(default_factory=dict)  # canonical name -> the last value given
    booleans: dict[str, bool] = field(default_factory=dict)


def split(
    args: list[str],
    *,
    valued: Mapping[str, str],
    booleans: Mapping[str, str] | None = None,
    missing: Missing,
) -> Split | None:
    """`args` by flag, each spelling mapped to its canonical name (an empty name: understood and
    ignored, e.g. a cache directory); None when a flag is unknown, a boolean's value is not a
    ParseBool spelling, or (missing="refuse") a valued flag lacks its value. A boolean flag never
    takes the next argument as its value, as pflag's NoOptDefVal."""
    bools = booleans or {}
    positional: list[str] = []
    values: dict[str, str] = {}
    flags: dict[str, bool] = {}
    items = iter(args)
    for arg in items:
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in bools:
            if eq and value not in TRUE | FALSE:
                return None
            flags[bools[name]] = not eq or value in TRUE
        elif name in valued:
            if not eq:
                following = next(items, None)
                if following is None and missing == "refuse":
                    return None
                value = following or ""
            if valued[name]:
                values[valued[name]] = value
        else:
            return None
    return Split(tuple(positional), values, flags)
