"""Auto-planning judge (method "autoplan", paper 5.1): the judge picks sub-dimensions and their combination itself.

In one call the judge names 2-6 aspects, scores each 1-10, gives an overall score S and says how it combined
them. Every sample keeps its aspects as leaves (s_k) and, in `meta`, the combination text and the ratios
l_k = s_k / S of the negotiation-inconsistency analysis (delta and sigma of section 5.3). The judgment's
score is the judge's own S (mean over samples), never a recomputation from the s_k.
"""

from __future__ import annotations

from typing import Any

from howtobench.data.models import Item
from howtobench.judges.base import LeafResult, register_judge
from howtobench.judges.baselines.common import (
    BaselinePrompts,
    LLMBaseline,
    Parsed,
    ReplyError,
    score_schema,
    valid_score,
)
from howtobench.llm.types import LLMClient

MIN_DIMENSIONS, MAX_DIMENSIONS = 2, 6
NODE = "autoplan"


class AutoPlanJudge(LLMBaseline):
    """One call: self-chosen aspects with scores, the combination rule in words, and the overall score S."""

    method = "autoplan"
    templates = ("baseline_autoplan",)

    def tail(self, item: Item, prompts: BaselinePrompts, context: dict[str, Any]) -> str:
        return prompts.render("baseline_autoplan", min_dims=MIN_DIMENSIONS, max_dims=MAX_DIMENSIONS, **context)

    def schema(self, item: Item) -> dict[str, Any]:
        aspect = {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40},
                           "reason": {"type": "string"}, "score": score_schema()},
            "required": ["name", "reason", "score"],
            "additionalProperties": False,
        }
        return {
            "type": "object",
            "properties": {
                "dimensions": {"type": "array", "items": aspect, "minItems": MIN_DIMENSIONS,
                               "maxItems": MAX_DIMENSIONS},
                "combination": {"type": "string"},
                "score": score_schema("overall score S"),
            },
            "required": ["dimensions", "combination", "score"],
            "additionalProperties": False,
        }

    def parse(self, data: dict[str, Any], item: Item) -> Parsed:
        total = valid_score(data.get("score"), "overall")
        aspects = data.get("dimensions")
        if not isinstance(aspects, list) or not MIN_DIMENSIONS <= len(aspects) <= MAX_DIMENSIONS:
            raise ReplyError(f"expected {MIN_DIMENSIONS}-{MAX_DIMENSIONS} dimensions, got {aspects!r}")
        leaves, values = [], []
        for k, aspect in enumerate(aspects):
            if not isinstance(aspect, dict) or not str(aspect.get("name", "")).strip():
                raise ReplyError(f"dimension {k} has no name: {aspect!r}")
            value = valid_score(aspect.get("score"), f"dimension {aspect['name']!r}")
            values.append(value)
            leaves.append(LeafResult(name=str(aspect["name"]).strip(), node=NODE, score=float(value), raw_score=value,
                                     reason=str(aspect.get("reason", ""))))
        meta = {"combination": str(data.get("combination", "")), "ratios": [v / total for v in values]}
        return Parsed(score=float(total), leaves=leaves, meta=meta)


@register_judge("autoplan", takes=AutoPlanJudge, scorer=True, description="one call: the judge plans its own "
                "sub-dimensions, scores and combines them (Table 3 baseline)")
def make_autoplan(*, client: LLMClient | None = None, **options: Any) -> AutoPlanJudge:
    """Factory for `--method autoplan`; options: samples, temperature, max_tokens, with_reference."""
    return AutoPlanJudge(client, **options)
