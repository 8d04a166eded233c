"""Single-pass judge (method "single"): the original LLM-as-a-judge, one 1-10 score in one call."""

from __future__ import annotations

from typing import Any

from howtobench.data.models import Item
from howtobench.judges.base import LeafResult, register_judge
from howtobench.judges.baselines.common import BaselinePrompts, LLMBaseline, Parsed
from howtobench.judges.baselines.replies import reasoned_score, valid_score
from howtobench.llm.types import LLMClient


class SingleJudge(LLMBaseline):
    """The writing against instruction (and reference) in one call; the reason is kept as the `overall` leaf."""

    method = "single"
    templates = ("baseline_single",)

    def tail(self, item: Item, prompts: BaselinePrompts, context: dict[str, Any]) -> str:
        return prompts.render("baseline_single", **context)

    def schema(self, item: Item) -> dict[str, Any]:
        return reasoned_score()

    def parse(self, data: dict[str, Any], item: Item) -> Parsed:
        score = valid_score(data.get("score"), "overall")
        leaf = LeafResult(name="overall", score=float(score), raw_score=score, reason=str(data.get("reason", "")))
        return Parsed(score=float(score), leaves=[leaf])


@register_judge("single", takes=SingleJudge, scorer=True, description="one judge call, one 1-10 score against "
                "instruction and reference (Table 3 baseline)")
def make_single(*, client: LLMClient | None = None, **options: Any) -> SingleJudge:
    """Factory for `--method single`; options: samples, temperature, max_tokens, with_reference."""
    return SingleJudge(client, **options)
