"""What `robustness` and `perturb --kind transfer-*` would spend: their pending calls, recorded, never sent.

Like the other planners (`howtobench.dry_run`), the real control flow runs against a `RecordingClient`: the
genre transfers still to write are asked of the recording writer (which answers each with a failure, so no
rewrite can come out of a plan), and the judges are planned over the sets the run would judge. Rule-based
perturbations cost nothing and are computed as the run would; a transfer not written yet is judged in the plan
as if it were as long as its original. Used for the money-first screen and `--dry-run`.
"""

from __future__ import annotations

from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.data.loader import LoadReport, load_items, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.judges.base import calls_a_model
from howtobench.judges.estimate import plan_judge_pairs
from howtobench.llm.dryrun import Estimate, RecordingClient, model_name, price_plan
from howtobench.llm.types import ChatRequest
from howtobench.robustness.apply import check_kinds, perturb_writings
from howtobench.robustness.files import Contexts
from howtobench.robustness.perturb_file import finished, load_sources, pending
from howtobench.robustness.suite import SuiteConfig, check_manifest, draw_sample, perturbed_path
from howtobench.robustness.table import ORIGINAL
from howtobench.robustness.transfer import TRANSFER_KINDS


async def transfer_requests(writings: list[Writing], kind: str, seed: int, items: dict[str, Item],
                            model: str) -> list[ChatRequest]:
    """The rewrite calls a transfer kind would make for `writings` (none for a rule-based kind)."""
    if kind not in TRANSFER_KINDS:
        return []
    client = RecordingClient(model)
    await perturb_writings(writings, kind, seed, Contexts(items), client)
    return client.requests


async def plan_perturb(source: Path, kind: str, seed: int, *, data_root: Path | None, endpoint: EndpointConfig | None,
                       prices: Path | None = None, out: Path | None = None) -> Estimate:
    """What `howtobench perturb` would call: one rewrite per writing not yet in `out` for a transfer kind (a
    stopped run resumes from its output), nothing otherwise."""
    check_kinds([kind])
    writings, items = load_sources(source, data_root, LoadReport())
    done = finished(out, kind, seed) if out is not None and out.is_file() else set()
    todo, kept = pending(writings, kind, done)
    model = model_name(endpoint)
    estimate = price_plan("writer", model, await transfer_requests(todo, kind, seed, items, model), prices)
    estimate.notes.append(f"{len(todo)} of {len(todo) + kept} writing(s) still to perturb")
    return estimate


def _stand_in(original: Writing, kind: str) -> Writing:
    """A transfer not written yet, judged in the plan as if as long as its original."""
    return Writing(infer_id=original.item_id, model=f"{original.model}+{kind}", output=original.output)


async def plan_robustness(config: SuiteConfig, *, data_root: Path, run_dir: Path,
                          judge_endpoint: EndpointConfig | None, writer_endpoint: EndpointConfig | None,
                          prices: Path | None = None) -> list[Estimate]:
    """The writer's transfers still to write and each LLM judge's pending judgments, as the suite would run them."""
    kinds = check_kinds(config.kinds)
    check_manifest(run_dir, config)
    items = {it.id: it for it in load_items(data_root, config.tasks)}
    sample = draw_sample(run_dir, data_root, items, config)
    if not sample:
        raise ConfigError(f"no non-empty writings with a reference under {data_root} for tasks {config.tasks}")
    writer = model_name(writer_endpoint or judge_endpoint)
    sets: dict[str, list[Writing]] = {ORIGINAL: sample}
    rewrites: list[ChatRequest] = []
    for kind in kinds:
        path = perturbed_path(run_dir, kind)
        if path.exists():
            sets[kind] = load_writings_file(path, items, strict=True)
        elif kind in TRANSFER_KINDS:
            rewrites += await transfer_requests(sample, kind, config.seed, items, writer)
            sets[kind] = [_stand_in(w, kind) for w in sample]
        else:
            sets[kind] = (await perturb_writings(sample, kind, config.seed, Contexts(items)))[0]
    estimates = [price_plan("writer", writer, rewrites, prices)] if rewrites else []
    pairs = [(items[w.item_id], w) for writings in sets.values() for w in writings]
    llm_methods = [m for m in config.methods if calls_a_model(m)]
    for method in llm_methods:
        estimate = await plan_judge_pairs(method, judge_endpoint, dict(config.judge_options), pairs,
                                          run_dir / "judgments" / f"{method}.jsonl", prices=prices)
        estimate.role = "judge" if len(llm_methods) == 1 else f"judge ({method})"
        estimates.append(estimate)
    return estimates
