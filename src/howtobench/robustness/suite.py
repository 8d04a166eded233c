"""`howtobench robustness`: sample writings, perturb them, judge everything, build Table 7.

A run directory holds one file per stage, so a killed run resumes where it stopped:

    manifest.json                       the sampling settings (a resumed run must match them)
    sample.jsonl                        the sampled release writings (originals)
    perturbed/<kind>.jsonl              perturbed writings (`<model>+<kind>`), failures beside them
    judgments/<method>.jsonl            one judgment file per method, originals and every perturbed
                                        set together (models `<model>` and `<model>+<kind>`), written
                                        by the shared resumable runner; `howtobench leaderboard` reads it
    table.json                          the computed table

Every LLM call (genre transfers, LLM judges) goes through the cached client layer. The writer
(for transfers) is the writer endpoint, else the judge endpoint, else the embedded local model;
LLM judges use the judge endpoint, else the local model. Overlap methods need no model, and the
local model is started only when something needs it.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items, load_release_writings, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.judges.base import EmptyConvention, Judgment, build_judge, calls_a_model
from howtobench.judges.runner import read_judgments, run_judge
from howtobench.llm.preflight import preflight_endpoints
from howtobench.llm.types import LLMClient
from howtobench.locks import output_lock
from howtobench.outputs import output_dir, write_text_atomic
from howtobench.robustness.apply import check_kinds, derive_seed, perturb_writings
from howtobench.robustness.files import Contexts, failures_path, write_writings
from howtobench.robustness.gameability import gameability_table
from howtobench.robustness.table import ORIGINAL, RobustnessTable, robustness_table, source_model
from howtobench.robustness.text_units import paragraphs
from howtobench.robustness.transfer import TRANSFER_KINDS
from howtobench.steps.client import step_client
from howtobench.steps.settings import Execution


@dataclass(frozen=True)
class SuiteConfig:
    """What to sample, how to perturb and how to judge."""

    methods: tuple[str, ...]
    kinds: tuple[str, ...]
    n: int = 50
    per_model: int = 5
    seed: int = 0
    tasks: tuple[str, ...] | None = None
    n_boot: int = 1000
    judge_options: tuple[tuple[str, Any], ...] = ()
    max_failed_rate: float | None = None  # stop judging early past this failed share (outcome.FailureBudget)
    empty: EmptyConvention = "exclude"  # how the table counts empty writings (judges.base.counted_score)

    def sampling(self) -> dict[str, Any]:
        """The settings that fix the sample (a resumed run must not change them)."""
        return {"n": self.n, "per_model": self.per_model, "seed": self.seed, "tasks": self.tasks}


def sample_writings(writings: Sequence[Writing], items: dict[str, Item], n: int, per_model: int,
                    seed: int) -> list[Writing]:
    """Up to `per_model` non-empty writings of each model (on items with a reference), then at most `n`.

    Each model's draw uses its own seed, so adding a model does not change the others' picks.
    The result is ordered by (model, item id).
    """
    by_model: dict[str, list[Writing]] = defaultdict(list)
    for w in writings:
        item = items.get(w.item_id)
        if not w.is_empty and item is not None and item.reference.strip():
            by_model[w.model].append(w)
    picked: list[Writing] = []
    for model in sorted(by_model):
        pool = sorted(by_model[model], key=lambda w: w.item_id)
        rng = random.Random(derive_seed(seed, "", model, "sample"))
        picked += rng.sample(pool, min(per_model, len(pool)))
    if len(picked) > n:
        picked = random.Random(derive_seed(seed, "", "", "sample-n")).sample(picked, n)
    return sorted(picked, key=lambda w: (w.model, w.item_id))


def check_manifest(run_dir: Path, config: SuiteConfig) -> None:
    """A resumed run must sample as the first one did (read only: the estimate checks it before any call)."""
    path = run_dir / "manifest.json"
    wanted = config.sampling()
    if path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("sampling") != json.loads(json.dumps(wanted)):
            raise ConfigError(f"{run_dir} was sampled with {saved.get('sampling')}, not {wanted}: use a new --run-dir")


def _write_manifest(run_dir: Path, config: SuiteConfig) -> None:
    check_manifest(run_dir, config)
    output_dir(run_dir)
    write_text_atomic(run_dir / "manifest.json",
                      json.dumps({"sampling": config.sampling(), "config": asdict(config)}, indent=2))


def draw_sample(run_dir: Path, data_root: Path, items: dict[str, Item], config: SuiteConfig) -> list[Writing]:
    """The run's sample: the saved one, else drawn from the release writings (not written here)."""
    path = run_dir / "sample.jsonl"
    if path.exists():
        return load_writings_file(path, items, strict=True)
    release = load_release_writings(data_root, config.tasks, items=list(items.values()))
    return sample_writings(release, items, config.n, config.per_model, config.seed)


def _sample(run_dir: Path, data_root: Path, items: dict[str, Item], config: SuiteConfig) -> list[Writing]:
    path = run_dir / "sample.jsonl"
    sample = draw_sample(run_dir, data_root, items, config)
    if not path.exists():
        write_writings(path, sample)
    return sample


def perturbed_path(run_dir: Path, kind: str) -> Path:
    return run_dir / "perturbed" / f"{kind}.jsonl"


def needs(config: SuiteConfig, run_dir: Path) -> tuple[bool, bool]:
    """(an LLM judge is needed, a writer is needed): the transfers not yet written need the writer."""
    need_judge = any(calls_a_model(m) for m in config.methods)
    need_writer = any(k in TRANSFER_KINDS and not perturbed_path(run_dir, k).exists() for k in config.kinds)
    return need_judge, need_writer


async def _perturbed(run_dir: Path, kind: str, sample: list[Writing], items: dict[str, Item], seed: int,
                     writer: LLMClient | None) -> list[Writing]:
    path = perturbed_path(run_dir, kind)
    if path.exists():
        return load_writings_file(path, items, strict=True)
    done, failed = await perturb_writings(sample, kind, seed, Contexts(items), writer)
    if failed:
        write_writings(failures_path(path), failed)
    write_writings(path, done)
    return done


def unchanged_writings(sets: dict[str, list[Writing]]) -> set[tuple[str, str]]:
    """(item, model) of perturbed writings that record no change or keep the original's paragraphs."""
    originals = {(w.item_id, w.model): paragraphs(w.output) for w in sets.get(ORIGINAL, [])}
    out = set()
    for kind, writings in sets.items():
        if kind == ORIGINAL:
            continue
        for w in writings:
            record = (w.model_extra or {}).get("perturbation") or {}
            same = originals.get((w.item_id, source_model(w.model, kind))) == paragraphs(w.output)
            if same or not record.get("changes"):
                out.add((w.item_id, w.model))
    return out


async def _judge_all(run_dir: Path, methods: Sequence[str], sets: dict[str, list[Writing]], items: dict[str, Item],
                     client: LLMClient | None, options: dict[str, Any], progress: bool,
                     max_failed_rate: float | None = None) -> dict[str, dict[str, list[Judgment]]]:
    """One runner call per method over every set at once (full concurrency, one resumable file per method)."""
    pairs = [(items[w.item_id], w) for writings in sets.values() for w in writings]
    out: dict[str, dict[str, list[Judgment]]] = {}
    for method in methods:
        llm = calls_a_model(method)
        judge = build_judge(method, client if llm else None, options if llm else {})
        done = iter(await run_judge(judge, pairs, run_dir / "judgments" / f"{method}.jsonl", progress=progress,
                                    max_failed_rate=max_failed_rate))
        out[method] = {name: [next(done) for _ in writings] for name, writings in sets.items()}
    return out


def failures_left(run_dir: Path, config: SuiteConfig) -> tuple[int, int]:
    """(failed, total) over the suite's judgments and perturbations as saved in `run_dir` (for the exit status)."""
    failed = total = 0
    for method in config.methods:
        judged = read_judgments(run_dir / "judgments" / f"{method}.jsonl").values()
        failed += sum(j.status == "failed" for j in judged)
        total += len(judged)
    for kind in config.kinds:
        for path, is_failure in ((perturbed_path(run_dir, kind), False),
                                 (failures_path(perturbed_path(run_dir, kind)), True)):
            rows = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()) \
                if path.exists() else 0
            failed, total = failed + rows * is_failure, total + rows
    return failed, total


def _write_table(run_dir: Path, table: RobustnessTable) -> None:
    write_text_atomic(run_dir / "table.json", json.dumps(asdict(table), ensure_ascii=False, indent=2))


async def run_suite(config: SuiteConfig, *, execution: Execution, data_root: Path, run_dir: Path,
                    judge_endpoint: EndpointConfig | None = None, writer_endpoint: EndpointConfig | None = None
                    ) -> RobustnessTable:
    """Run (or resume) the whole suite in `run_dir` and return the table (also saved as table.json); the folder is
    locked meanwhile (a second process on it refuses, naming this one). `execution` gives the workspace, the
    cache mode, whether to preflight the endpoints, the progress bar, and the user's price table (added to the
    accounting of every call, and so to `--max-cost`); the calls are live."""
    with output_lock(output_dir(run_dir), folder=True):
        return await _suite_locked(config, execution, data_root, run_dir, judge_endpoint, writer_endpoint)


async def _suite_locked(config: SuiteConfig, execution: Execution, data_root: Path, run_dir: Path,
                        judge_endpoint: EndpointConfig | None, writer_endpoint: EndpointConfig | None
                        ) -> RobustnessTable:
    kinds = check_kinds(config.kinds)
    if not config.methods:
        raise ConfigError("choose at least one judge method (--methods)")
    items = {it.id: it for it in load_items(data_root, config.tasks)}
    _write_manifest(run_dir, config)
    sample = _sample(run_dir, data_root, items, config)
    if not sample:
        raise ConfigError(f"no non-empty writings with a reference under {data_root} for tasks {config.tasks}")
    need_judge, need_writer = needs(config, run_dir)
    await preflight_endpoints({"writer": (writer_endpoint or judge_endpoint) if need_writer else None,
                               "judge": judge_endpoint if need_judge else None},
                              enabled=execution.preflight, cache_mode=execution.cache_mode,
                              workspace=execution.workspace)
    async with AsyncExitStack() as stack:
        judge_client = (await stack.enter_async_context(step_client(
            judge_endpoint, execution, purpose="model", run_id=None, items=len(sample), calls_model=need_judge,
            check=False))).client
        writer_client = judge_client if need_writer and writer_endpoint is None and judge_client else None
        if need_writer and writer_client is None:
            writer_client = (await stack.enter_async_context(step_client(
                writer_endpoint or judge_endpoint, execution, purpose="model", run_id=None, items=len(sample),
                check=False))).client
        sets: dict[str, list[Writing]] = {ORIGINAL: sample}
        for kind in kinds:
            sets[kind] = await _perturbed(run_dir, kind, sample, items, config.seed, writer_client)
        judgments = await _judge_all(run_dir, config.methods, sets, items, judge_client, dict(config.judge_options),
                                     execution.progress, config.max_failed_rate)
    table = robustness_table(judgments, kinds, unchanged=unchanged_writings(sets), seed=config.seed,
                             n_boot=config.n_boot, empty=config.empty)
    table = replace(table, gameability=gameability_table(judgments, kinds, seed=config.seed, n_boot=config.n_boot,
                                                         empty=config.empty))
    _write_table(run_dir, table)
    return table
