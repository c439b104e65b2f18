"""A Rollout's AnalysisRuns: one per analysis step of a canary and one before a blue-green
promotion, named `<rollout>-<hash>-<revision>-<step|pre>` (a `.N` suffix after a collision),
labelled with the hash and step, cancelled (spec.terminate) when no longer current; a Failed or
Error one aborts the Rollout with upstream's message, an Inconclusive one pauses it.

Upstream (argoproj/argo-rollouts v1.9.1): rollout/analysis.go (reconcileAnalysisRuns,
reconcileStepBasedAnalysisRun, reconcilePrePromotionAnalysisRun, needsNewAnalysisRun,
cancelAnalysisRuns, newAnalysisRunFromRollout), utils/analysis/factory.go (StepLabels,
PrePromotionLabels), utils/analysis/helpers.go (CreateWithCollisionCounter)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..storage.store import Obj, Store
from . import canary as c
from .analysisrun import GROUP as ARGO_GROUP
from .podutil import controller_ref
from .rollout_status import (
    BLUE_GREEN_PAUSE,
    CANARY_PAUSE,
    COMPLETED_PHASES,
    INCONCLUSIVE,
    REVISION,
    SCALE_DOWN_DEADLINE,
    Synced,
    labels_of,
)


def _templates(store: Store, namespace: str, refs: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """getAnalysisTemplatesFromRefs: the (Cluster)AnalysisTemplates named, nested ones too."""
    namespaced, clustered = (
        store.custom.lookup(ARGO_GROUP, "analysistemplates"),
        store.custom.lookup(ARGO_GROUP, "clusteranalysistemplates"),
    )
    templates: list[Obj] = []
    cluster_templates: list[Obj] = []
    for ref in refs:
        name = str(ref.get("templateName", ""))
        if ref.get("clusterScope"):
            found = None if clustered is None else store.find(clustered, "", name)
            if found is None:
                raise ValueError(f'clusteranalysistemplate.argoproj.io "{name}" not found')
            cluster_templates.append(found)
        else:
            found = None if namespaced is None else store.find(namespaced, namespace, name)
            if found is None:
                raise ValueError(f'analysistemplate.argoproj.io "{name}" not found')
            templates.append(found)
        inner = (found.get("spec") or {}).get("templates") or []
        if inner:
            more, more_cluster = _templates(store, namespace, inner)
            templates += more
            cluster_templates += more_cluster
    seen: set[str] = set()
    unique = []
    for t in templates + cluster_templates:
        key = f"{t['kind']}/{t['metadata']['name']}"
        if key not in seen:
            seen.add(key)
            unique.append(t)
    return [t for t in unique if t["kind"] == "AnalysisTemplate"], [
        t for t in unique if t["kind"] == "ClusterAnalysisTemplate"
    ]


def _field(ro: Obj, path: str) -> str:
    """fieldpath.ExtractFieldPathAsString for metadata (name, namespace, labels['k'],
    annotations['k']) and a plain path into the Rollout (extractValueFromRollout)."""
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return str((ro["metadata"].get(m.group(1)) or {}).get(m.group(2), ""))
    node: Any = ro
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if node is None:
        raise ValueError(f"fieldPath {path} not found")
    return node if isinstance(node, str) else json.dumps(node)


def new_run(
    store: Store,
    *,
    namespace: str,
    analysis: Obj,
    name: str,
    labels: dict[str, str],
    annotations: dict[str, str],
    owner: Obj,
    rollout: Obj,
    stable: Obj | None,
    latest: Obj | None,
) -> Obj:
    """newAnalysisRunFromRollout: the templates flattened (metrics, args), the Rollout's args
    (valueFrom.podTemplateHashValue, fieldRef) merged over the templates'; raises ValueError with
    upstream's words when a template is missing or an argument stays unresolved."""
    templates, cluster_templates = _templates(store, namespace, list(analysis.get("templates") or []))
    metrics: list[Obj] = []
    args: list[Obj] = []
    for t in [*templates, *cluster_templates]:
        spec = t.get("spec") or {}
        metrics += copy.deepcopy(spec.get("metrics") or [])
        for arg in spec.get("args") or []:
            prev = next((a for a in args if a["name"] == arg["name"]), None)
            if prev is None:
                args.append(copy.deepcopy(arg))
            elif (
                prev.get("value") is not None
                and arg.get("value") is not None
                and prev["value"] != arg["value"]
            ):
                raise ValueError(
                    f"Argument `{arg['name']}` specified multiple times with different values: "
                    f"'{prev['value']}', '{arg['value']}'"
                )
            elif prev.get("value") is None:
                args[args.index(prev)] = copy.deepcopy(arg)
    names = [m.get("name") for m in metrics]
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"two metrics have the same name '{n}'")
    for arg in analysis.get("args") or []:  # BuildArgumentsForRolloutAnalysisRun, then MergeArgs
        value = arg.get("value")
        source = arg.get("valueFrom") or {}
        if source.get("podTemplateHashValue") == "Latest":
            value = c.pod_hash(latest)
        elif source.get("podTemplateHashValue") == "Stable":
            value = c.pod_hash(stable)
        elif (source.get("fieldRef") or {}).get("fieldPath"):
            value = _field(rollout, source["fieldRef"]["fieldPath"])
        target = next((a for a in args if a["name"] == arg.get("name")), None)
        if target is not None:
            target["value"] = "" if value is None else str(value)
            target.pop("valueFrom", None)
    for arg in args:
        if arg.get("value") is None and arg.get("valueFrom") is None:
            raise ValueError(f"args.{arg['name']} was not resolved")
    return {
        "apiVersion": f"{ARGO_GROUP}/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner],
        },
        "spec": {"metrics": metrics, "args": args},
    }


class AnalysisSteps(Synced):
    """Methods of rollout._Sync (one reconciliation of one Rollout): analysissteps."""

    def _needs_new_run(self, ar: Obj | None) -> bool:
        if ar is None:
            return True
        status = self.ro.get("status") or {}
        if (
            status.get("controllerPause")
            and self.pause.condition(CANARY_PAUSE) is None
            and self.pause.condition(BLUE_GREEN_PAUSE) is None
        ):
            return (ar.get("status") or {}).get("phase") == "Inconclusive"
        return bool(status.get("abortedAt"))

    def _cancel(self, runs: list[Obj | None]) -> None:
        res = self.ctl.resource("analysisruns")
        for ar in runs:
            if ar is None or res is None:
                continue
            if (ar.get("spec") or {}).get("terminate") or (ar.get("status") or {}).get(
                "phase"
            ) in COMPLETED_PHASES:
                continue
            self.store.mutate(
                res, self.ns, ar["metadata"]["name"], lambda o: o["spec"].__setitem__("terminate", True)
            )

    def _create_run(self, analysis: Obj, infix: str, labels: dict[str, str]) -> Obj | None:
        res = self.ctl.resource("analysisruns")
        if res is None or self.new is None:
            return None
        h = c.pod_hash(self.new)
        revision = (self.ro["metadata"].get("annotations") or {}).get(REVISION, "")
        name = "-".join(p for p in (self.name, h, revision, infix) if p)
        try:
            run = new_run(
                self.store,
                namespace=self.ns,
                analysis=analysis,
                name=name,
                labels={**labels, **((self.ro["spec"].get("selector") or {}).get("matchLabels") or {})},
                annotations={REVISION: revision},
                owner=controller_ref(self.ro),
                rollout=self.ro,
                stable=self.stable,
                latest=self.new,
            )
        except ValueError as e:
            self._event("Warning", "AnalysisRunError", str(e))
            return None
        base, n = name, 1
        while True:  # CreateWithCollisionCounter
            existing = self.store.find(res, self.ns, run["metadata"]["name"])
            if existing is None:
                return self.store.create(res, self.ns, run)
            same = (existing.get("spec") or {}) == run["spec"] and any(
                r.get("uid") == self.ro["metadata"]["uid"]
                for r in existing["metadata"].get("ownerReferences") or []
            )
            if same and (existing.get("status") or {}).get("phase") not in COMPLETED_PHASES:
                return existing
            run["metadata"]["name"] = f"{base}.{n}"
            n += 1

    def _reconcile_analysis_runs(self) -> None:
        """reconcileAnalysisRuns: step AnalysisRuns of a canary, pre-promotion ones of a
        blue-green; none while aborted, on the initial deploy or with promoteFull."""
        status = self.ro.get("status") or {}
        if (
            self.pause.aborted
            or status.get("promoteFull")
            or not status.get("stableRS")
            or (
                self.new is not None
                and (self.new["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE)
            )
        ):
            self._set_current_runs(self.step_ar, self.pre_ar)
            self._cancel([self.step_ar, self.pre_ar, *self.other_ars])
            return
        step_ar = pre_ar = None
        if c.canary(self.ro) is not None:
            step_ar = self._step_run()
        else:
            pre_ar = self._pre_promotion_run()
            if pre_ar is not None:
                phase = (pre_ar.get("status") or {}).get("phase")
                if phase == "Inconclusive":
                    self.pause.add.append(INCONCLUSIVE)
                elif phase in ("Error", "Failed"):
                    msg = (pre_ar.get("status") or {}).get("message", "")
                    self.pause.abort(
                        "Blue/green pre-promotion analysis phase error/failed" + (f": {msg}" if msg else "")
                    )
        self._set_current_runs(step_ar, pre_ar)
        current = {a["metadata"]["name"] for a in (step_ar, pre_ar) if a is not None}
        self._cancel([a for a in self.other_ars if a["metadata"]["name"] not in current])

    def _set_current_runs(self, step_ar: Obj | None, pre_ar: Obj | None) -> None:
        def summary(ar: Obj) -> Obj:
            st = ar.get("status") or {}
            out = {"name": ar["metadata"]["name"], "status": st.get("phase", "")}
            if st.get("message"):
                out["message"] = st["message"]
            return out

        self.step_ar, self.pre_ar = step_ar, pre_ar
        if c.canary(self.ro) is not None and step_ar is not None:
            self.new_status["canary"]["currentStepAnalysisRunStatus"] = summary(step_ar)
        if c.blue_green(self.ro) is not None and pre_ar is not None:
            self.new_status["blueGreen"]["prePromotionAnalysisRunStatus"] = summary(pre_ar)

    def _step_run(self) -> Obj | None:
        step, index = c.current_step(self.ro)
        cur = self.step_ar
        status = self.ro.get("status") or {}
        if status.get("pauseConditions") or status.get("abort"):
            return cur
        analysis = (step or {}).get("analysis")
        previous = analysis is not None and cur is not None and labels_of(cur).get("step-index") != str(index)
        if step is None or not analysis or not analysis.get("templates") or index is None or previous:
            self._cancel([cur])
            return None
        if self._needs_new_run(cur):
            labels = {c.HASH_LABEL: c.pod_hash(self.new), "rollout-type": "Step", "step-index": str(index)}
            return self._create_run(analysis, str(index), labels)
        assert cur is not None
        phase = (cur.get("status") or {}).get("phase")
        if phase == "Inconclusive":
            self.pause.add.append(INCONCLUSIVE)
        elif phase in ("Error", "Failed"):
            msg = (cur.get("status") or {}).get("message", "")
            self.pause.abort("Step-based analysis phase error/failed" + (f": {msg}" if msg else ""))
        return cur

    def _pre_promotion_run(self) -> Obj | None:
        analysis = (c.blue_green(self.ro) or {}).get("prePromotionAnalysis")
        cur = self.pre_ar
        if not analysis or not analysis.get("templates"):
            self._cancel([cur])
            return None
        if self._skip_pre_promotion(cur):
            self._cancel([cur])
            return cur
        if self.pause.condition(INCONCLUSIVE) is not None:
            return cur
        if self._needs_new_run(cur):
            labels = {c.HASH_LABEL: c.pod_hash(self.new), "rollout-type": "PrePromotion"}
            return self._create_run(analysis, "pre", labels)
        return cur

    def _skip_pre_promotion(self, cur: Obj | None) -> bool:
        h = c.pod_hash(self.new)
        status = self.ro.get("status") or {}
        active = (status.get("blueGreen") or {}).get("activeSelector", "")
        if status.get("stableRS") == h or not active or active == h or not h:
            return True
        if cur is not None:
            return False
        return not c.is_saturated(self.ro, self.new)

    def _completed_pre_promotion(self) -> bool:
        if not (c.blue_green(self.ro) or {}).get("prePromotionAnalysis"):
            return True
        return self.pre_ar is not None and (self.pre_ar.get("status") or {}).get("phase") == "Successful"
