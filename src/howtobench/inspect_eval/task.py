"""The `howtobench` inspect task: HoWToBench items in, the model's writings judged by our judges.

    pip install 'howtobench[inspect]'
    inspect eval howtobench/howtobench --model openai/gpt-4o --model-role grader=openai/gpt-4o-2024-11-20 \\
        -T task=guide -T genre=poem,prose -T limit=5
    inspect view

Task arguments (`-T name=value`): `task` (completion, guide, open; comma-separated), `genre`, `ids`,
`limit` (first N per task), `data` (the benchmark folder; default $HOWTOBENCH_DATA or the downloaded copy),
`system_prompt` — the selection and prompts of `howtobench generate`; `method` (tow, rubric, single, autoplan,
bleu, rouge, sacrebleu), `judge` (the judge model, instead of the `grader` role), `no_reference`,
`renormalize`, `samples`, `tree`, `judge_max_tokens`, `prompt_language` (en, the default, or zh) — the options
of `howtobench judge`; `empty` (exclude: an empty writing is an unscored sample, as the leaderboard leaves it
out; lowest: it gets the judge's lowest scores). The writer samples like `howtobench generate` (temperature 0.7,
4,096 tokens, seed 0) unless inspect's own flags say otherwise.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from howtobench.generate import GenerateSettings
from howtobench.inspect_eval.dataset import howtobench_dataset, split_arg
from howtobench.inspect_eval.scorers import judge_model_check, scorer_for
from howtobench.judges.options import judge_options, parse_judge_options, prompt_language_for, with_judge_options


@solver(name="howtobench_judge_check")
def judge_check(method: str, judge: str | None) -> Solver:
    """Before the writer is asked: stop the sample when the scorer would find no judge (no `grader` role, no
    `judge=`), so a missing grader costs no generation."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        judge_model_check(method, judge)
        return state

    return solve


@task(name="howtobench")
def howtobench(
    task: str | list[str] | None = None,
    genre: str | list[str] | None = None,
    ids: str | list[str] | None = None,
    limit: int | None = None,
    data: str | None = None,
    system_prompt: str | None = None,
    method: str = "tow",
    judge: str | None = None,
    no_reference: bool = False,
    renormalize: bool = False,
    samples: int = 1,
    tree: str | None = None,
    judge_max_tokens: int | None = None,
    prompt_language: str | None = None,
    judge_option: str | list[str] | None = None,
    empty: str = "exclude",
) -> Task:
    """HoWToBench writing tasks judged by Tree-of-Writing (or a baseline), as `howtobench run` would."""
    settings = GenerateSettings(system_prompt=system_prompt)
    dataset = howtobench_dataset(tasks=split_arg(task), genres=split_arg(genre), ids=split_arg(ids), limit=limit,
                                 data=Path(data) if data else None, settings=settings)
    options = with_judge_options(method, judge_options(
        with_reference=not no_reference, renormalize=renormalize, samples=samples, tree=tree,
        max_tokens=judge_max_tokens, prompt_language=prompt_language_for(method, prompt_language)),
        parse_judge_options(judge_option))  # `-T judge_option=samples=3`: any option of the method
    s = settings.sampling
    return Task(
        dataset=dataset,
        solver=[judge_check(method, judge), generate()],
        scorer=scorer_for(method, judge, empty=empty, **options),
        config=GenerateConfig(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed),
        version=1,
    )
