"""`howtobench calibrate`: map a new judge's scores onto a reference judge's (or the paper's), with a drift report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.calibration.anchors import choose_anchors
from howtobench.calibration.drift import drift_lines
from howtobench.calibration.fit import fit_calibration
from howtobench.calibration.paper import agreement_lines, fit_to_paper, placement_lines, refuse_unsupported
from howtobench.calibration.record import Calibration, check_matches, save_calibration
from howtobench.cli import params
from howtobench.cli.help_groups import GroupedCommand
from howtobench.data.paper import paper_table4
from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment
from howtobench.outputs import output_file
from howtobench.report.leaderboard import load_judgments

from .judge_flags import AS_JUDGED, Judging
from .money import Money
from .options import LocalJudgeOpt, model_flags
from .status import EXIT_STATUSES

console = Console(stderr=True)

ReferenceArg = Annotated[list[Path] | None, typer.Argument(
    help="Judgment JSONL files of the reference judge (the one whose units you want). With --to-paper: judgments "
    "of your models by the new judge, placed on the paper's scale.",
    show_default=False, metavar="REFERENCE.jsonl")]
OutOpt = Annotated[Path, typer.Option("-o", "--out", help="The calibration file to write (JSON). With a judge "
                                      "endpoint, the anchors' texts and the new judge's judgments are kept beside "
                                      "it (OUT.anchors.jsonl, OUT.new.jsonl): a re-run resumes.")]
NewOpt = Annotated[list[Path] | None, typer.Option("--new", help="Judgments of the new judge (JSONL, repeatable) "
                   "of writings the reference files hold: used as the anchors instead of calling a judge.")]
AnchorsOpt = Annotated[int | None, typer.Option("--anchors", min=10, help="How many writings the new judge "
                       "re-judges (default: as many as --width asks for; with --to-paper 3000).")]
WidthOpt = Annotated[float, typer.Option("--width", min=0.01, help="Target width of a calibrated mean's 95% "
                     "interval, which sizes the anchor set: (2 · 1.96 · sd / width)² anchors, sd being the "
                     "reference roots' spread.")]
ToPaperOpt = Annotated[bool, typer.Option("--to-paper", help="Calibrate onto the paper's Table 4 (GPT-4o) at "
                       "system level: the new judge scores shipped writings of the paper's ten models and a line per "
                       "task maps its means onto the published ones; refused unless the judge orders the paper's "
                       "models like the paper (Kendall τ one-sided p < 0.05).")]
WritingsOpt = Annotated[list[Path] | None, typer.Option("--writings", help="Texts of reference writings that are not "
                        "the release's (JSONL: infer_id, model, output), for the new judge to re-judge.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the anchor choice and of the bootstrap.")]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates over anchors.")]


def _say(line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)


@params.flags(params.JUDGE_ENDPOINT, after="local_judge")
@params.bundled("judging", Judging, params.group_of(Judging, "no_reference", "renormalize", "samples", "tree",
                                                   "judge_max_tokens", "prompt_language"))
@params.flags(params.CALL_FILES, after="bootstrap")
@params.bundled("money", Money, params.MONEY_FLAGS)
@params.bundled("filters", params.Filters, params.group_of(params.Filters, "data"))
@params.bundled("control", params.Control, params.group_of(params.Control, "no_progress", "dry_run", "prices"))
def calibrate(
    references: ReferenceArg = None,
    out: OutOpt = Path("calibration.json"),
    new: NewOpt = None,
    to_paper: ToPaperOpt = False,
    anchors: AnchorsOpt = None,
    width: WidthOpt = 0.2,
    writings: WritingsOpt = None,
    seed: SeedOpt = 0,
    local_judge: LocalJudgeOpt = False,
    judging: Judging = AS_JUDGED,
    bootstrap: BootOpt = 1000,
    filters: params.Filters = params.EVERY_ITEM,
    money: Money = params.ASK,
    control: params.Control = params.DEFAULT_CONTROL,
) -> None:
    """Fit a map from a new judge's scores to a reference judge's units, and report how far the judges drift.

    The anchors are a stratified sample (task × genre × model, spread over the score range) of the reference files'
    writings; the new judge scores them (--judge-* flags: the cost is shown first and cached calls are free), or
    its judgments of them are given (--new). The map is monotone (isotonic) per node and task, with bootstrap
    intervals over anchors. Use the file with `leaderboard`, `report` or `run --calibration FILE`.
    """
    from howtobench.cli.calibrate_judge import Anchoring, new_judgments, paper_judgments

    setup = Anchoring(out=out, anchors=anchors, seed=seed, writings=tuple(writings or ()), local_judge=local_judge,
                      judging=judging, filters=filters, money=money, control=control, report=_say)
    if to_paper:
        mine = load_judgments(references) if references else []  # read first: a bad file stops before any call
        judged = load_judgments(new) if new else paper_judgments(setup, model_flags())
        if judged is None:
            return
        _paper(judged, out, seed, mine)
        return
    if not references:
        raise ConfigError("give the reference judge's judgment files (or --to-paper)")
    reference = load_judgments(references)
    if new:
        fresh = load_judgments(new)
    else:
        plan = choose_anchors(reference, n=anchors, width=None if anchors else width, seed=seed)
        _say(f"{len(plan.anchors)} anchors from {len(plan.strata)} strata (task × genre × model) for a target width "
             f"of {width:g}" if anchors is None else f"{len(plan.anchors)} anchors from {len(plan.strata)} strata")
        got = new_judgments(setup, model_flags(), plan)
        if got is None:
            return
        fresh = got
    _save(fit_calibration(reference, fresh, n_boot=bootstrap, seed=seed), out)


FEW_ANCHORS = 100
"""Below this many anchors the measured intervals stop covering (docs/calibration.md, bench/calibration.py)."""


def _save(cal: Calibration, out: Path) -> None:
    if len(cal.anchors) < FEW_ANCHORS:
        _say(f"warning: {len(cal.anchors)} anchors: below {FEW_ANCHORS} no task has a map of its own and the measured "
             "intervals stop covering (docs/calibration.md); use more for numbers you publish")
    for line in drift_lines(cal.drift, cal.reference.name, cal.new.name):
        _say(line)
    for m in cal.maps:
        _say(f"map {m.node} [{m.scope}]: {m.n_anchors} anchors, RMSE {m.rmse:.3f}, 95% band width {m.band_width:.3f}")
    save_calibration(cal, output_file(out))
    _say(f"{cal.label}; written to {out}")


def _paper(judged: list[Judgment], out: Path, seed: int, mine: list[Judgment]) -> None:
    cal = fit_to_paper(judged, paper_table4(), seed=seed)
    for line in agreement_lines(cal):
        _say(line)
    refuse_unsupported(cal)
    if mine:
        check_matches(cal, mine, out)
    save_calibration(cal, output_file(out))
    _say(f"{cal.label}; written to {out}")
    for line in placement_lines(cal, mine):
        _say(line)


def register(app: typer.Typer) -> None:
    app.command("calibrate", epilog=EXIT_STATUSES, cls=GroupedCommand)(calibrate)
