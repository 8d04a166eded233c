"""Auto-planning judge (method "autoplan", paper 5.1): the judge picks sub-dimensions and their combination itself.

In one call the judge names 2-6 aspects, scores each 1-10, gives an overall score S and says how it combined
them. Every sample keeps its aspects as leaves (s_k) and, in `meta`, the combination text and the ratios
l_k = s_k / S of the negotiation-inconsistency analysis (delta and sigma of section 5.3). The judgment's
score is the judge's own S (mean over samples), never a recomputation from the s_k.
"""

from __future__ import annotations

from typing import Any

from howtobench.data.models import Item
from howtobench.judges.base import register_judge
from howtobench.judges.baselines.common import BaselinePrompts, LLMBaseline, Parsed
from howtobench.judges.baselines.replies import ReplyError, dimensions_reply, reasoned_score, scored_leaf, valid_score
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
        aspect = reasoned_score(name={"type": "string", "minLength": 1, "maxLength": 40})
        aspects = {"type": "array", "items": aspect, "minItems": MIN_DIMENSIONS, "maxItems": MAX_DIMENSIONS}
        return dimensions_reply(aspects, "combination", "overall score S")

    def parse(self, data: dict[str, Any], item: Item) -> Parsed:
        total = valid_score(data.get("score"), "overall")
        aspects = data.get("dimensions")
        if not isinstance(aspects, list) or not MIN_DIMENSIONS <= len(aspects) <= MAX_DIMENSIONS:
            raise ReplyError(f"expected {MIN_DIMENSIONS}-{MAX_DIMENSIONS} dimensions, got {aspects!r}")
        leaves = []
        for k, aspect in enumerate(aspects):
            if not isinstance(aspect, dict) or not str(aspect.get("name", "")).strip():
                raise ReplyError(f"dimension {k} has no name: {aspect!r}")
            leaves.append(scored_leaf(aspect, str(aspect["name"]).strip(), f"dimension {aspect['name']!r}", NODE))
        ratios = [aspect["score"] / total for aspect in aspects]  # each score checked by scored_leaf
        return Parsed(score=float(total), leaves=leaves, meta={"combination": str(data.get("combination", "")),
                                                               "ratios": ratios})


@register_judge("autoplan", takes=AutoPlanJudge, scorer=True, description="one call: the judge plans its own "
                "sub-dimensions, scores and combines them (Table 3 baseline)")
def make_autoplan(*, client: LLMClient | None = None, **options: Any) -> AutoPlanJudge:
    """Factory for `--method autoplan`; options: samples, temperature, max_tokens, with_reference."""
    return AutoPlanJudge(client, **options)
