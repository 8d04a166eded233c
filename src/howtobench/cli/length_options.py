"""`--length-control` and `--writings`, shared by the commands that print leaderboards."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings, load_writings_file, release_models
from howtobench.data.models import Writing
from howtobench.judges.base import Judgment
from howtobench.report.length_control import LengthSources, needs_sources, sources_from

LengthControlOpt = Annotated[
    bool,
    typer.Option(
        "--length-control",
        help="Add length-controlled tables: each model's score predicted at its item's reference length, from a "
        "least-squares fit per task of score on ln(writing chars / reference chars) with model and item effects "
        "(AlpacaEval's idea for pointwise scores; see docs/length-control.md). Prints the fitted coefficients.",
    ),
]
LengthAnchorOpt = Annotated[
    Path | None,
    typer.Option(
        "--length-anchor",
        exists=True,
        dir_okay=False,
        help="Judgments of pad / truncate variants of some writings (`howtobench robustness --kinds pad,truncate`, "
        "or `run --length-anchor N`): the judge's own length slope is measured on those pairs (content fixed, "
        "length varied) and sets the length-controlled values; the observational slope is printed beside it as a "
        "check, with a warning when they disagree. Implies --length-control.",
    ),
]
AnchorCountOpt = Annotated[
    int,
    typer.Option(
        "--length-anchor",
        min=0,
        help="Also judge a pad and a truncate variant of N writings drawn across tasks and models (content fixed, "
        "length varied; their cost is on its own line of the estimate): the judge's own length slope, measured on "
        "those pairs, sets the length-controlled tables (implies --length-control). 0: none.",
    ),
]
class LengthSlopes(StrEnum):
    """--length-slopes: report.length_per_model.MODES."""

    pooled = "pooled"
    per_model = "per-model"


LengthSlopesOpt = Annotated[
    LengthSlopes | None,
    typer.Option(
        "--length-slopes",
        help="pooled (default): one length slope pair per task shared by its models; a model's own slope is "
        "confounded with its quality and noisy on a run's items. per-model: each model's slope (the root score), "
        "shrunk toward the pooled one by empirical Bayes, for a judge that rewards length for some models only; "
        "bounded and flagged like the pooled correction, slopes printed per model (docs/length-control.md). "
        "per-model implies --length-control; `report` of a run takes the run's by default.",
        case_sensitive=False,
    ),
]
WritingsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--writings",
        help="Writings JSONL files giving the lengths of judgments written before lengths were recorded "
        "(the release's writings are read from --data).",
    ),
]


def length_sources(judgments: list[Judgment], data: Path | None, writings: list[Path] | None) -> LengthSources:
    """Lengths for judgments that do not record them: from `writings` files and, under `data`, the benchmark's
    references and the release's writings of the judged models. Nothing is read when every judgment has them."""
    if not needs_sources(judgments):
        return LengthSources()
    texts: list[Writing] = [w for path in writings or () for w in load_writings_file(path)]
    if data is None:
        return sources_from(None, texts)
    root = resolve_data_dir(data)
    tasks = sorted({j.task for j in judgments})
    items = load_items(root, tasks)
    judged = {j.model for j in judgments}
    released = judged & {m for t in tasks for m in release_models(root, t)}
    if released:
        texts += load_release_writings(root, tasks, sorted(released), items=items)
    return sources_from(items, texts)
