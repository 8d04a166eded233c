"""inspect scorers for ToW and the baselines: our judges, unchanged, judging through an inspect model.

    inspect eval howtobench/howtobench --model openai/gpt-4o --model-role grader=openai/gpt-4o-2024-11-20
    inspect score LOG.eval --scorer howtobench/rubric -S judge=openai/gpt-4o

A scorer builds the judge from our registry (`judges.base.build_judge`, the code behind `howtobench judge`)
over `InspectJudgeClient`, rebuilds the item from the sample's metadata and the writing from the model's
completion, and turns the `Judgment` into a `Score`: the root as its value, every leaf (node, score, weight,
reason, failure) and the full judgment record in its metadata, a leaf table as its explanation.

The judge model is the `judge=` argument (a model name or an inspect `Model`), else the model bound to the
role `grader` (`--model-role grader=...`). Neither is an error: the model under test never judges itself
by accident.

A judgment without a score (a leaf whose reply stayed invalid, weights that never came) is an unscored
sample (`Score.unscored`, reason `grader_failed`): inspect leaves it out of the metrics and counts it, as
our leaderboard does. A run-level error (authentication, unreachable provider) is raised, so inspect marks
the sample errored and `inspect eval-retry` judges it again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, get_model, model_roles
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from howtobench.data.models import Writing
from howtobench.errors import ConfigError
from howtobench.inspect_eval.client import InspectJudgeClient
from howtobench.inspect_eval.dataset import item_from_metadata
from howtobench.inspect_eval.metrics import leaderboard
from howtobench.judges.base import (
    EMPTY_CONVENTIONS,
    METHODS,
    EmptyConvention,
    Judge,
    Judgment,
    build_judge,
    calls_a_model,
    counted_score,
    import_judges,
)
from howtobench.judges.runner import judge_or_fail
from howtobench.llm.replies import split_reasoning

JUDGE_ROLE = "grader"


def _cell(text: str | None) -> str:
    """Judge text inside a Markdown table cell: one line, no pipe, no HTML (model text is untrusted)."""
    cleaned = (text or "").replace("\n", " ").replace("|", "¦").replace("<", "&lt;").replace(">", "&gt;")
    return cleaned[:300]


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def explanation(judgment: Judgment) -> str:
    """The root, the nodes and one table row per leaf, for `inspect view`."""
    nodes = ", ".join(f"{name} {_number(v)}" for name, v in judgment.nodes.items())
    lines = [f"**{judgment.method}** {_number(judgment.score)} ({judgment.status})" + (f" — {nodes}" if nodes else "")]
    if judgment.leaves:
        lines += ["", "| leaf | node | score | weight | reason |", "| --- | --- | --- | --- | --- |"]
        for leaf in judgment.leaves:
            why = leaf.reason if leaf.status != "failed" else f"FAILED: {leaf.error}"
            lines.append(f"| {leaf.name} | {leaf.node or ''} | {_number(leaf.score)} | "
                         f"{_number(judgment.weights.get(leaf.name))} | {_cell(why)} |")
    if len(judgment.samples) > 1:
        lines += ["", f"{len(judgment.samples)} samples (the score is their mean):"]
        lines += [f"- #{s.index}: {_number(s.score)} ({s.status})"
                  + "".join(f", {name} {_number(v)}" for name, v in s.nodes.items()) for s in judgment.samples]
    lines += [f"- {_cell(failure)}" for failure in judgment.failures]
    return "\n".join(lines)


def score_metadata(judgment: Judgment) -> dict[str, Any]:
    """Leaves by name (node, score, raw score, weight, reason, status, error), nodes, weights, each sample (score,
    status, its own node scores: ToW with sampled weights) and the record."""
    leaves = {
        leaf.name: {"node": leaf.node, "score": leaf.score, "raw_score": leaf.raw_score,
                    "weight": judgment.weights.get(leaf.name), "reason": leaf.reason, "status": leaf.status,
                    "error": leaf.error}
        for leaf in judgment.leaves
    }
    return {
        "method": judgment.method, "status": judgment.status, "nodes": judgment.nodes, "leaves": leaves,
        "weights": judgment.weights, "weight_repairs": judgment.weight_repairs, "failures": judgment.failures,
        "samples": [{"index": s.index, "score": s.score, "status": s.status, "nodes": s.nodes}
                    for s in judgment.samples],
        "judge_model": judgment.judge_model, "judgment": judgment.model_dump(mode="json"),
    }


def judgment_score(judgment: Judgment, empty: EmptyConvention = "exclude") -> Score:
    """A scored judgment as a Score; a failed one (no score) as an unscored Score — never a number. An empty
    writing follows the leaderboard's convention: unscored ("no_response") by default, its lowest scores with
    `empty="lowest"`."""
    metadata = score_metadata(judgment)
    if judgment.status == "failed" or judgment.score is None:
        return Score.unscored(reason="grader_failed", explanation=explanation(judgment), metadata=metadata)
    if counted_score(judgment, empty) is None:
        return Score.unscored(reason="no_response", explanation=explanation(judgment), metadata=metadata)
    return Score(value=judgment.score, explanation=explanation(judgment), metadata=metadata)


class _Judges:
    """One judge per judge model for the life of a scorer, so J_W's per-item memo is shared by its samples."""

    def __init__(self, method: str, judge: str | Model | None, role: str, options: dict[str, Any],
                 reasks: int, cache_weights: bool, prices: Path | None) -> None:
        self.method, self.judge, self.role, self.options = method, judge, role, options
        self.reasks, self.cache_weights, self.prices = reasks, cache_weights, prices
        self._built: dict[int, tuple[Model | None, Judge]] = {}

    def resolve_model(self) -> Model | None:
        if not calls_a_model(self.method):
            return None
        if self.judge is not None:
            return get_model(self.judge)
        bound = model_roles().get(self.role)
        if isinstance(bound, list):
            bound = bound[0] if bound else None
        if bound is None:
            raise ConfigError(f"no judge model for the {self.method} scorer: pass --model-role "
                              f"{self.role}=PROVIDER/MODEL (or judge=... to the task or the scorer)")
        return bound

    def get(self) -> Judge:
        model = self.resolve_model()
        key = id(model)
        if key not in self._built:
            client = None if model is None else InspectJudgeClient(
                model, reasks=self.reasks, cache_weights=self.cache_weights, prices=self.prices)
            self._built[key] = (model, build_judge(self.method, client, dict(self.options)))
        return self._built[key][1]


def judge_model_check(method: str, judge: str | Model | None = None, role: str = JUDGE_ROLE) -> None:
    """Raise the scorer's ConfigError now when it would find no judge model: before the sample's writing is generated
    (and paid for), not after (`judge_solver`)."""
    _Judges(method, judge, role, {}, 0, False, None).resolve_model()


def judge_scorer(method: str = "tow", *, judge: str | Model | None = None, role: str = JUDGE_ROLE,
                 reasks: int = 2, cache_weights: bool = True, prices: Path | None = None,
                 empty: EmptyConvention = "exclude", **options: Any) -> Scorer:
    """The score function of any registered method (`options` as for `howtobench judge`: tree, with_reference,
    renormalize, samples, max_tokens; `empty` as `howtobench leaderboard --empty`)."""
    if empty not in EMPTY_CONVENTIONS:
        raise ConfigError(f"empty must be one of {', '.join(EMPTY_CONVENTIONS)}, not {empty!r}")
    judges = _Judges(method, judge, role, options, reasks, cache_weights, prices)

    async def score(state: TaskState, target: Target) -> Score:
        item = item_from_metadata(state.metadata)
        text, _ = split_reasoning(state.output.completion, None)
        writing = Writing(infer_id=item.id, model=state.model.name, output=text)
        return judgment_score(await judge_or_fail(judges.get(), item, writing), empty)

    return score


def _named_scorer(method: str, doc: str) -> Callable[..., Scorer]:
    """A registered scorer for one method (`howtobench/<method>`; `judge=` and `howtobench judge`'s options)."""

    def factory(judge: str | Model | None = None, **options: Any) -> Scorer:
        return judge_scorer(method, judge=judge, **options)

    factory.__name__ = factory.__qualname__ = method
    factory.__doc__ = doc
    return scorer(metrics=[leaderboard()], name=method)(factory)


@scorer(metrics=[leaderboard()], name="howtobench_judge")
def howtobench_judge(method: str = "tow", judge: str | Model | None = None, **options: Any) -> Scorer:
    """Any `howtobench judge --method` (also bleu, rouge, sacrebleu, which call no model)."""
    return judge_scorer(method, judge=judge, **options)


_NAMED: dict[str, Callable[..., Scorer]] = {}


def named_scorers() -> dict[str, Callable[..., Scorer]]:
    """One inspect scorer `howtobench/<method>` per registered method that asks for one (`register_judge(...,
    scorer=True)`), installed plugins' included; made once per method, so inspect's registry holds each once."""
    import_judges()
    for method in METHODS.values():
        if method.scorer and method.name not in _NAMED:
            _NAMED[method.name] = _named_scorer(method.name, method.description)
    return dict(_NAMED)


def scorer_for(method: str, judge: str | Model | None = None, **options: Any) -> Scorer:
    """The scorer of `method`, under its own name in the log (`tow`, `rubric`, ...) when it has one."""
    named = named_scorers().get(method)
    return named(judge, **options) if named else howtobench_judge(method, judge, **options)
