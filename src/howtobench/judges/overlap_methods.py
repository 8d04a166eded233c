"""The overlap metrics as judge methods ("bleu", "rouge", "sacrebleu"), registered without their tokenisers.

jieba and sacrebleu are the `[metrics]` extra (howtobench.extras): the methods are listed and described whether
or not it is installed, and building one without it stops with one line naming the extra. The metrics
themselves are judges.overlap (and judges.overlap_metrics), imported when a judge is built.
"""

from __future__ import annotations

from collections.abc import Callable

from howtobench.extras import require
from howtobench.judges.base import Judge, register_judge
from howtobench.llm.types import LLMClient

SCORE_MAX: dict[str, float] = {"bleu": 100.0, "rouge": 1.0, "sacrebleu": 100.0}
DESCRIPTIONS: dict[str, str] = {
    "bleu": "the authors' BLEU-1 against the reference, 0-100 (no model)",
    "rouge": "ROUGE-L F1 as rouge-chinese computes it, 0-1 (no model)",
    "sacrebleu": "standard sentence BLEU-4 (sacreBLEU), 0-100 (no model)",
}


def _factory(method: str) -> Callable[..., Judge]:
    def make(*, client: LLMClient | None = None) -> Judge:
        """Overlap judges need no model and no settings (the shared CLI passes `client=None`)."""
        require("metrics", f"--method {method}")
        from howtobench.judges.overlap import OverlapJudge

        return OverlapJudge(method)

    return make


for _method in DESCRIPTIONS:
    register_judge(_method, calls_model=False, description=DESCRIPTIONS[_method],
                   score_max=SCORE_MAX[_method])(_factory(_method))
