"""What `judge`, `generate` and `run` would spend: the pending work run against a recording client.

Each plan applies the same selection and resume rules as the real command (only items not yet in the
writings file, only writings not yet in the judgments file) but writes nothing, starts no model (the
price is looked up by the configured endpoint's model name, else the embedded model's name) and sends
nothing: the judge's own control flow runs with `RecordingClient`, so weights shared per item, calls
per leaf, samples and empty writings are counted as the real run would make them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from howtobench.data.loader import load_items
from howtobench.data.models import Item, Writing
from howtobench.errors import DataError, JudgeError
from howtobench.generate import GenerateSettings, build_request, read_generated, safe_file_stem
from howtobench.judges.estimate import plan_judge_pairs
from howtobench.llm.accounting import estimate_tokens
from howtobench.llm.dryrun import Estimate, model_name, price_plan
from howtobench.llm.expected import reply_sizes
from howtobench.llm.types import Usage
from howtobench.robustness.anchor import anchor_file
from howtobench.run import (
    _judge_options,
    _release_writings,
    anchor_pairs_for,
    load_generated_writings,
    select_run_items,
    user_writings,
    writer_sampling,
)
from howtobench.run_settings import RunSettings
from howtobench.steps.judge import JudgeJob, pairs_to_judge

# ------------------------------------------------------------------ generate


def plan_generate(items: Sequence[Item], out_path: Path, settings: GenerateSettings, model: str,
                  prices: Path | None = None, workspace: Path | None = None) -> tuple[Estimate, list[Item]]:
    """The writer's calls for the items not yet in `out_path` (one each), and those items. Expected: the writer's
    earlier writings in `workspace`'s call log, else each as long as its item's human reference."""
    done = read_generated(out_path, settings.model_name or model, repair=False)
    todo = [it for it in items if it.id not in done]
    typical = [estimate_tokens(it.reference) if it.reference else None for it in todo]
    estimate = price_plan("writer", model, [build_request(it, settings) for it in todo], prices,
                          sizes=reply_sizes(workspace, model), typical=typical)
    if len(todo) < len(items):
        estimate.notes.append(f"{len(items) - len(todo)} item(s) already written in {out_path} are skipped")
    return estimate, todo


# ------------------------------------------------------------------ judge


async def plan_judge(job: JudgeJob, prices: Path | None = None) -> Estimate:
    """What `howtobench judge` with these settings would call."""
    pairs = pairs_to_judge(job)
    if not pairs:
        raise JudgeError("nothing to judge: no writing matches the filters")
    return await plan_judge_pairs(job.method, job.endpoint, job.options, pairs, job.out_path,
                                  redo_failed=job.redo_failed, prices=prices, workspace=job.execution.workspace)


async def plan_judges(job: JudgeJob, prices: Path | None = None) -> list[Estimate]:
    """`plan_judge` for the job's judge, or for each judge of its panel, priced at that judge's model (one lane
    per judge, named as `JudgeJob.judge_endpoints` names it)."""
    if job.panel is None:
        return [await plan_judge(job, prices)]
    return [replace(await plan_judge(job.member(m), prices), role=f"judge {m.name}") for m in job.panel.judges]


# ------------------------------------------------------------------ run


def stand_in(item: Item, model: str) -> Writing:
    """A writing not generated yet, judged in the plan as if it were as long as the item's reference."""
    return Writing(infer_id=item.id, model=model, output=item.reference or item.instruction)


async def plan_run(settings: RunSettings, prices: Path | None = None) -> list[Estimate]:
    """What `howtobench run` would call: the writer for the items not yet written, the judge for every writing
    (shipped, given and generated) not yet judged, writings still to generate counted with `stand_in`."""
    all_items = load_items(settings.selection.data_dir, settings.selection.tasks)
    release = _release_writings(settings, all_items)
    items = select_run_items(settings, all_items, release)
    if not items:
        raise DataError("the filters select no item")
    estimates: list[Estimate] = []
    generated: list[Writing] = []
    not_yet = 0
    if settings.generate:
        writer = model_name(settings.writer)
        out = settings.run_dir / "writings" / f"{safe_file_stem(writer)}.jsonl"
        gen = GenerateSettings(sampling=writer_sampling(settings), system_prompt=settings.system_prompt)
        writer_estimate, todo = plan_generate(items, out, gen, writer, prices, settings.execution.workspace)
        estimates.append(writer_estimate)
        done = load_generated_writings(out, items) if out.exists() else []
        generated = [*done, *(stand_in(it, writer) for it in todo)]
        not_yet = len(todo)
    by_id = {it.id: it for it in items}
    writings = [*release, *(w for rows in user_writings(settings, items) for w in rows), *generated]
    pairs = [(by_id[w.item_id], w) for w in writings if w.item_id in by_id]
    out = settings.run_dir / "judgments" / f"{settings.method}.jsonl"
    if settings.panel is not None:  # a lane per judge of the panel, priced at its own model
        lanes = [replace(await plan_judge_pairs(settings.method, m.endpoint, _judge_options(settings), pairs, out,
                                                prices=prices), role=f"judge {m.name}") for m in settings.panel.judges]
        return [*estimates, *lanes]
    judge = await plan_judge_pairs(settings.method, settings.judge, _judge_options(settings), pairs, out,
                                   prices=prices, workspace=settings.execution.workspace)
    judges = [judge]
    shipped = {(w.item_id, w.model) for w in release}
    own = [(it, w) for it, w in pairs if (w.item_id, w.model) not in shipped]
    if own and len(own) < len(pairs):  # show what re-judging the paper's models adds, on its own line
        mine = await plan_judge_pairs(settings.method, settings.judge, _judge_options(settings), own, out,
                                      prices=prices, workspace=settings.execution.workspace)
        mine.role = "judge (your writings)"
        judges = [mine, difference("judge (shipped models, --release)", judge, mine)]
    if not_yet:
        judges[0].notes.append(f"{not_yet} writing(s) not generated yet are counted as long as their item's "
                               "reference")
    if settings.length_anchor:  # the pad/truncate variants --length-anchor N judges, on a line of their own
        variants = anchor_pairs_for(settings, items, writings)
        anchor = await plan_judge_pairs(settings.method, settings.judge, _judge_options(settings), variants,
                                        anchor_file(settings.run_dir, settings.method), prices=prices,
                                        workspace=settings.execution.workspace)
        anchor.role = f"judge (length anchor: {len(variants)} variants)"
        judges.append(anchor)
    return [*estimates, *judges]


def difference(role: str, whole: Estimate, part: Estimate) -> Estimate:
    """`whole` minus `part`, as one line (per-purpose detail is not kept: shared calls split unevenly)."""
    a, b = whole.total, part.total
    rest = Usage(calls=a.calls - b.calls, prompt_tokens=a.prompt_tokens - b.prompt_tokens,
                 completion_tokens=a.completion_tokens - b.completion_tokens, cost_usd=a.cost_usd - b.cost_usd)
    expected = None if whole.expected_usd is None or part.expected_usd is None else \
        whole.expected_usd - part.expected_usd
    return Estimate(role=role, model=whole.model, priced=whole.priced, by_purpose={"all": rest},
                    expected_usd=expected, expected_basis=whole.expected_basis,
                    expected_completion_tokens=whole.expected_completion_tokens - part.expected_completion_tokens)
