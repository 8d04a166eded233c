"""Elaborated-rubric judge (method "rubric", paper 5.1 / Appendix H): the genre's rubric, one call.

The judge scores every dimension of the item's genre rubric (`judges/rubrics/<genre>.yaml`) 1-10 and gives
an overall 1-10; the judgment's score is that overall score (the judge's own holistic call, as in the
paper), and the dimension scores are its leaves. The rubric used and its hash are recorded; the hash is
part of the cache version, so editing a rubric file invalidates exactly its cached calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from howtobench.data.genres import GENRES
from howtobench.data.models import Item
from howtobench.judges.base import LeafResult, register_judge
from howtobench.judges.baselines.common import BaselinePrompts, LLMBaseline, Parsed
from howtobench.judges.baselines.replies import (
    LOWEST,
    ReplyError,
    closed_object,
    dimensions_reply,
    reasoned_score,
    scored_leaf,
    valid_score,
)
from howtobench.judges.baselines.rubric_files import RUBRICS_DIR, Rubric, rubric_for
from howtobench.llm.types import LLMClient


class RubricJudge(LLMBaseline):
    """Per-dimension scores and an overall score against the genre rubric."""

    method = "rubric"
    templates = ("baseline_rubric",)

    def __init__(self, client: LLMClient | None, *, rubrics_dir: Path = RUBRICS_DIR, **options: Any) -> None:
        super().__init__(client, **options)
        self.rubrics_dir = rubrics_dir

    def rubric(self, item: Item) -> Rubric:
        return rubric_for(item, self.rubrics_dir)

    def tail(self, item: Item, prompts: BaselinePrompts, context: dict[str, Any]) -> str:
        rubric, lang = self.rubric(item), self.prompt_language
        genre = GENRES.get(rubric.genre)
        label = (genre.en if lang == "en" else genre.zh) if genre else rubric.genre
        dims = [d.in_language(lang) for d in rubric.dimensions]
        return prompts.render("baseline_rubric", genre_label=label, dimensions=dims, **context)

    def schema(self, item: Item) -> dict[str, Any]:
        one = reasoned_score()
        return dimensions_reply(closed_object({d.id: one for d in self.rubric(item).dimensions}), "reason",
                                "overall score")

    def parse(self, data: dict[str, Any], item: Item) -> Parsed:
        overall = valid_score(data.get("score"), "overall")
        given = data.get("dimensions")
        if not isinstance(given, dict):
            raise ReplyError(f"dimensions must be an object, got {given!r}")
        leaves = []
        rubric = self.rubric(item)
        for dim in rubric.dimensions:
            entry = given.get(dim.id)
            if not isinstance(entry, dict):
                raise ReplyError(f"dimension {dim.id!r} is missing")
            leaves.append(scored_leaf(entry, dim.id, f"dimension {dim.id!r}", rubric.genre))
        return Parsed(score=float(overall), leaves=leaves, meta={"overall_reason": str(data.get("reason", ""))})

    def empty_leaves(self, item: Item) -> list[LeafResult]:
        rubric = self.rubric(item)
        return [LeafResult(name=d.id, node=rubric.genre, score=LOWEST, raw_score=LOWEST, status="empty")
                for d in rubric.dimensions]

    def extra_meta(self, item: Item) -> dict[str, Any]:
        rubric = self.rubric(item)
        return {"rubric": rubric.genre, "rubric_hash": rubric.hash}

    def version_suffix(self, item: Item) -> str:
        return ":" + self.rubric(item).hash


@register_judge("rubric", takes=RubricJudge, scorer=True,
                description="one call with the genre's elaborated rubric (Table 3 baseline)")
def make_rubric(*, client: LLMClient | None = None, **options: Any) -> RubricJudge:
    """Factory for `--method rubric`; options: samples, temperature, max_tokens, with_reference, rubrics_dir."""
    return RubricJudge(client, **options)
