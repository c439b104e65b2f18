"""Argo Rollouts' replica arithmetic, pure: how many pods the canary and the stable ReplicaSet get
at the current step without a traffic router, when a step's counts are reached, what surge and
unavailability allow, and which step a Rollout is at.

Upstream (argoproj/argo-rollouts v1.9.1): utils/replicaset/canary.go
(CalculateReplicaCountsForBasicCanary, approximateWeightedCanaryStableReplicaCounts,
AtDesiredReplicaCountsForCanary, GetCurrentCanaryStep, GetCurrentSetWeight,
GetCanaryReplicasOrWeight), utils/replicaset/replicaset.go (resolveFenceposts, MaxSurge,
MaxUnavailable, NewRSNewReplicas), utils/replicaset/bluegreen.go (ReadyForPause),
utils/annotations/annotations.go (IsSaturated), utils/defaults/defaults.go (25% surge and
unavailability, read by intstr's lenient GetValueFromIntOrPercent, which takes "25" as 25%)."""

from __future__ import annotations

import math
from typing import Any

Obj = dict[str, Any]

HASH_LABEL = "rollouts-pod-template-hash"  # v1alpha1.DefaultRolloutUniqueLabelKey
DESIRED = "rollout.argoproj.io/desired-replicas"  # annotations.DesiredReplicasAnnotation
MAX_WEIGHT = 100  # weightutil.MaxTrafficWeight without a traffic router


def replicas(ro: Obj) -> int:
    """defaults.GetReplicasOrDefault."""
    value = (ro.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def canary(ro: Obj) -> Obj | None:
    strategy = (ro.get("spec") or {}).get("strategy") or {}
    c = strategy.get("canary")
    return c if isinstance(c, dict) else None


def blue_green(ro: Obj) -> Obj | None:
    bg = ((ro.get("spec") or {}).get("strategy") or {}).get("blueGreen")
    return bg if isinstance(bg, dict) else None


def steps(ro: Obj) -> list[Obj]:
    return list((canary(ro) or {}).get("steps") or [])


def spec_replicas(rs: Obj | None) -> int:
    return int(((rs or {}).get("spec") or {}).get("replicas") or 0)


def available(rs: Obj | None) -> int:
    return int(((rs or {}).get("status") or {}).get("availableReplicas") or 0)


def created(rs: Obj | None) -> int:
    return int(((rs or {}).get("status") or {}).get("replicas") or 0)


def pod_hash(rs: Obj | None) -> str:
    return str(((rs or {}).get("metadata") or {}).get("labels", {}).get(HASH_LABEL, ""))


def _value(v: Any, total: int, *, round_up: bool) -> int:
    """intstr.GetValueFromIntOrPercent (the deprecated one Argo calls): every string is a percent."""
    if isinstance(v, str):
        pct = int(v.replace("%", ""))
        x = pct * total / 100
        return math.ceil(x) if round_up else math.floor(x)
    return int(v)


def _fenceposts(ro: Obj) -> tuple[int, int]:
    c = canary(ro) or {}
    total = replicas(ro)
    surge = _value(c.get("maxSurge", "25"), total, round_up=True)
    unavailable = _value(c.get("maxUnavailable", "25"), total, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(ro: Obj) -> int:
    return _fenceposts(ro)[0] if canary(ro) is not None else 0


def max_unavailable(ro: Obj) -> int:
    total = replicas(ro)
    if total == 0:
        return 0
    if canary(ro) is not None:
        unavailable = _fenceposts(ro)[1]
    else:
        bg = blue_green(ro) or {}
        unavailable = _value(bg.get("maxUnavailable", "25"), total, round_up=False)
    return min(unavailable, total)


def current_step(ro: Obj) -> tuple[Obj | None, int | None]:
    """GetCurrentCanaryStep: the step at status.currentStepIndex (None past the last one) and the
    index; (None, None) without steps."""
    all_steps = steps(ro)
    if canary(ro) is None or not all_steps:
        return None, None
    index = int((ro.get("status") or {}).get("currentStepIndex") or 0)
    return (all_steps[index] if index < len(all_steps) else None), index


def current_set_weight(ro: Obj) -> int:
    """GetCurrentSetWeight: 0 when aborted, else the last setWeight at or before the step."""
    if (ro.get("status") or {}).get("abort"):
        return 0
    step, index = current_step(ro)
    if step is None or index is None:
        return MAX_WEIGHT
    for s in reversed(steps(ro)[: index + 1]):
        if s.get("setWeight") is not None:
            return int(s["setWeight"])
    return 0


def desired_weight(ro: Obj) -> int:
    """GetCanaryReplicasOrWeight without a traffic router (so no setCanaryScale)."""
    st = ro.get("status") or {}
    if st.get("promoteFull") or not st.get("stableRS") or st.get("currentPodHash") == st.get("stableRS"):
        return MAX_WEIGHT
    return current_set_weight(ro)


def _tied(weight: int, total: int) -> bool:
    frac = math.modf(total * (weight / MAX_WEIGHT))[0]
    return frac == 0.5


def _delta(weight: int, canary_n: int, total: int) -> float:
    return abs(canary_n * MAX_WEIGHT / total - weight)


def approximate(spec_n: int, weight: int, surge: int) -> tuple[int, int]:
    """approximateWeightedCanaryStableReplicaCounts: the (canary, stable) split closest to the
    weight, allowing one surge pod when maxSurge permits it."""
    if spec_n == 0:
        return 0, 0
    ceil_n = math.ceil(spec_n * weight / MAX_WEIGHT)
    floor_n = math.floor(spec_n * weight / MAX_WEIGHT)
    zero_allowed = weight in (MAX_WEIGHT, 0) or (spec_n == 1 and surge == 0)
    options: list[tuple[int, int]] = []
    if ceil_n < spec_n or zero_allowed:
        options.append((ceil_n, spec_n))
    if not _tied(weight, spec_n) and (floor_n != 0 or zero_allowed):
        options.append((floor_n, spec_n))
    if surge > 0:
        options.append((ceil_n, spec_n + 1))
        if not _tied(weight, spec_n + 1) and (floor_n != 0 or zero_allowed):
            options.append((floor_n, spec_n + 1))
    if not options:
        return 0, spec_n
    best = options[0]
    for option in options[1:]:
        if _delta(weight, *option) < _delta(weight, *best):
            best = option
    return best[0], best[1] - best[0]


def stable_exists(new: Obj | None, stable: Obj | None) -> bool:
    """CheckStableRSExists: a stable ReplicaSet that is not the new one."""
    if stable is None:
        return False
    return new is None or new["metadata"]["name"] != stable["metadata"]["name"]


def _for_scale_down(rs: Obj | None, ignore_availability: bool) -> int:
    if rs is None:
        return 0
    if spec_replicas(rs) < available(rs) or ignore_availability:
        return spec_replicas(rs)
    return available(rs)


def _scale_down_count(drain: Obj | None, desired: int, scale_down: int, current: int) -> int:
    if drain is not None and spec_replicas(drain) > desired:
        return max(desired, spec_replicas(drain) - scale_down)
    return current


def _within_limits(
    drain: Obj | None, adjust: Obj | None, drain_n: int, adjust_n: int, max_total: int, min_available: int
) -> tuple[int, int]:
    """adjustReplicaWithinLimits."""
    total_available = 0
    over = max(0, adjust_n + drain_n - max_total)
    if drain is not None:
        total_available += min(available(drain), drain_n)
    if adjust is not None:
        adjust_n -= over
        total_available += min(available(adjust), adjust_n)
        extra = max(0, available(adjust) - adjust_n)
        needed = max(0, min_available - total_available)
        adjust_n += min(extra, needed)
        over = max(0, adjust_n + drain_n - max_total)
        drain_n -= over
    return drain_n, adjust_n


def basic_canary_counts(ro: Obj, new: Obj | None, stable: Obj | None, others: list[Obj]) -> tuple[int, int]:
    """CalculateReplicaCountsForBasicCanary: (new, stable) replica counts for this sync, moving
    toward the step's weight within maxSurge and maxUnavailable."""
    spec_n = replicas(ro)
    surge = max_surge(ro)
    want_new, want_stable = approximate(spec_n, desired_weight(ro), surge)
    new_n = spec_replicas(new)
    stable_n = 0
    scale_stable = stable_exists(new, stable)
    if scale_stable:
        stable_n = spec_replicas(stable)
    else:
        want_new, want_stable = spec_n, 0
    max_total = spec_n + surge
    everything = [*others, *([new] if new is not None else []), *([stable] if scale_stable else [])]
    scale_up = max_total - sum(spec_replicas(r) for r in everything)
    if scale_stable and spec_replicas(stable) < want_stable and scale_up > 0:
        if spec_replicas(stable) + scale_up < want_stable:
            stable_n = spec_replicas(stable) + scale_up
            scale_up = 0
        else:
            stable_n = want_stable
            scale_up -= want_stable - spec_replicas(stable)
    if new is not None and spec_replicas(new) < want_new and scale_up > 0:
        new_n = min(spec_replicas(new) + scale_up, want_new)
    if sum(spec_replicas(r) for r in others) > 0:
        return new_n, stable_n
    min_available = spec_n - max_unavailable(ro)
    increasing = new is None or want_new >= spec_replicas(new)
    to_scale_down = _for_scale_down(new, not increasing) + _for_scale_down(stable, increasing)
    if to_scale_down <= min_available:
        return new_n, stable_n
    scale_down = to_scale_down - min_available
    if not increasing:
        new_n = _scale_down_count(new, want_new, scale_down, new_n)
        new_n, stable_n = _within_limits(new, stable, new_n, stable_n, max_total, min_available)
    elif scale_stable:
        stable_n = _scale_down_count(stable, want_stable, scale_down, stable_n)
        stable_n, new_n = _within_limits(stable, new, stable_n, new_n, max_total, min_available)
    return new_n, stable_n


def at_desired_counts(ro: Obj, new: Obj | None, stable: Obj | None, others: list[Obj]) -> bool:
    """AtDesiredReplicaCountsForCanary without a traffic router: the canary's pods all available,
    the stable's all created, no older ReplicaSet's pod available."""
    want_new, want_stable = basic_canary_counts(ro, new, stable, others)
    if new is None or want_new != spec_replicas(new) or want_new != available(new):
        return False
    if stable is not None and not (want_stable == spec_replicas(stable) == created(stable)):
        return False
    return sum(available(r) for r in others) == 0


def is_saturated(ro: Obj, rs: Obj | None) -> bool:
    """annotations.IsSaturated."""
    if rs is None:
        return False
    try:
        desired = int((rs["metadata"].get("annotations") or {}).get(DESIRED, ""))
    except ValueError:
        return False
    n = replicas(ro)
    return spec_replicas(rs) == n and desired == n and available(rs) == n
