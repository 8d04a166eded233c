"""Builders of small, exactly-known judgment sets for the meta tests."""

from __future__ import annotations

from pathlib import Path

from howtobench.judges.base import Judgment, LeafResult, SampleResult
from howtobench.llm.types import Usage


def judgment(item: str, model: str, score: float | None, *, task: str = "guide", method: str = "tow",
             genre: str = "fiction", **kw: object) -> Judgment:
    return Judgment(method=method, item_id=item, model=model, task=task, genre=genre, score=score, **kw)


def sampled(item: str, model: str, scores: list[float | None], *, task: str = "guide", cost: float = 0.0,
            leaves: list[dict[str, float]] | None = None, method: str = "autoplan") -> Judgment:
    leaf_sets = leaves or [{}] * len(scores)
    samples = [
        SampleResult(index=k, score=s, leaves=[LeafResult(name=n, score=v) for n, v in leaf_sets[k].items()])
        for k, s in enumerate(scores)
    ]
    return Judgment(method=method, item_id=item, model=model, task=task, genre="fiction", score=None,
                    samples=samples, usage=Usage(calls=len(scores), cost_usd=cost))


def write_jsonl(path: Path, judgments: list[Judgment]) -> Path:
    path.write_text("".join(j.model_dump_json() + "\n" for j in judgments), encoding="utf-8")
    return path
