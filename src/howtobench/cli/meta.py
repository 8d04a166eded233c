"""`howtobench meta ...`: how good is a judge? Correlations with humans, agreement, ablation, inconsistency.

Every number is computed from stored judgment files and human ratings; no command here calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import command_group
from howtobench.errors import DataError
from howtobench.meta.ablation import ablation_rows, unreproduced_roots
from howtobench.meta.agreement import Agreement, agreement
from howtobench.meta.correlate import CorrelationRow, CorrelationSettings, correlate_results
from howtobench.meta.correlate_table import correlation_table
from howtobench.meta.human import HumanRating, average_scores, load_ratings
from howtobench.meta.inconsistency import (
    SIGMA_FORMULAS,
    Inconsistency,
    autoplan_trials,
    detect_kind,
    empty_judgments,
    load_weight_samples,
    summarize,
    tow_weight_samples,
    weight_trials,
)
from howtobench.meta.judgments import SkipReport, load_judgments, load_results
from howtobench.report.formats import output_format
from howtobench.report.tables import Table, print_tables

from .options import EmptyOpt, FormatOpt, StrictOpt
from .params import bundled, group_of

meta_app = command_group(
    "meta",
    "Meta-evaluation: compare judges with human ratings (no model calls; reads stored judgments).",
)

HumanOpt = Annotated[
    Path,
    typer.Option(
        "--human",
        exists=True,
        dir_okay=False,
        help="Human ratings, JSONL or CSV: item_id (or infer_id), model, rater, score, optional dimensions. "
        "Raters of one writing are averaged.",
    ),
]
ResultsArg = Annotated[
    list[Path],
    typer.Argument(
        exists=True, dir_okay=False, help="Judgment JSONL files (one per method, as `howtobench judge` writes)."
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0,
                                      help="Seed of the bootstrap resampling (same seed, same intervals).")]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=10, help="Number of bootstrap resamples of the items.")]
DimOpt = Annotated[
    str | None,
    typer.Option("--human-dim", help="Correlate with this per-dimension human score (e.g. content) instead of the "
                 "overall score."),
]
CiOpt = Annotated[
    bool,
    typer.Option("--ci/--no-ci", help="Show the 95% bootstrap interval next to each correlation (wide tables)."),
]
LevelOpt = Annotated[
    list[str] | None,
    typer.Option("--level", help="Which tables: system, sample (repeatable; default both)."),
]
IntervalOpt = Annotated[
    str,
    typer.Option("--interval", help="bca (default): bias-corrected and accelerated bootstrap interval, which "
                 "corrects the downward pull of resampling on system-level correlations; percentile: plain "
                 "2.5/97.5% quantiles of the resamples. The method is named in the output."),
]
ItemsOpt = Annotated[
    str,
    typer.Option("--items", help="System level: common (default) averages every model over the items that have a "
                 "judge score and a human rating for every model (their number is shown); available averages "
                 "each model over its own rated items."),
]


def register(app: typer.Typer) -> None:
    """Attach the `meta` sub-commands to the main app."""
    app.add_typer(meta_app, name="meta")


def _warn_skipped(console: Console, report: SkipReport) -> None:
    for err in report.skipped[:5]:
        console.print(f"[yellow]skipped[/] {err}", highlight=False)
    if report.count > 5:
        console.print(f"[yellow]... and {report.count - 5} more skipped rows[/]")


def _ci_style(show: bool, fmt: str) -> str:
    """Intervals as numeric columns for machines, inline text for people, or not at all."""
    if not show:
        return "none"
    return "columns" if output_format(fmt).for_machines else "inline"


RankByOpt = Annotated[
    str,
    typer.Option("--rank-by", help="Self-consistency files: the system-level All correlation that picks the worst "
                 "and the best sample (whole samples, as Table 3's numbers imply): spearman (default), kendall or "
                 "pearson. Each row names its sample."),
]


@dataclass(frozen=True)
class Correlations:
    """The flags `correlate` and `ablation` share: which tables (--level), how the correlations and their
    intervals are computed (--seed, --bootstrap, --interval, --items, --empty, --rank-by) and shown (--ci)."""

    level: LevelOpt = None
    seed: SeedOpt = 0
    bootstrap: BootOpt = 1000
    interval: IntervalOpt = "bca"
    items: ItemsOpt = "common"
    empty: EmptyOpt = "exclude"
    rank_by: RankByOpt = "spearman"
    show_ci: CiOpt = True

    def settings(self) -> CorrelationSettings:
        """The correlation settings (a value they refuse is a usage error naming it)."""
        try:
            return CorrelationSettings(n_boot=self.bootstrap, seed=self.seed, interval=self.interval,
                                       items=self.items, empty=self.empty, rank_by=self.rank_by)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    def tables(self, rows: list[CorrelationRow], fmt: str, title: str | None = None) -> list[Table]:
        """One table per --level (default: system, then sample), intervals as --ci and --format want them."""
        ci = _ci_style(self.show_ci, fmt)
        return [correlation_table(rows, level, ci, title) for level in (self.level or ["system", "sample"])]


PAPER_TABLES = Correlations()
"""The default of a meta command's `correlations` parameter (what the flags' defaults make)."""


def _human_scores(path: Path, strict: bool, console: Console, dim: str | None = None) -> dict[tuple[str, str], float]:
    report = SkipReport()
    ratings = load_ratings(path, strict=strict, report=report)
    _warn_skipped(console, report)
    scores = average_scores(ratings, dim)
    if not scores:
        raise DataError(f"{path}: no rating has the dimension {dim!r}")
    return scores


@meta_app.command("correlate")
@bundled("correlations", Correlations)
def correlate_cmd(
    results: ResultsArg,
    human: HumanOpt,
    human_dim: DimOpt = None,
    correlations: Correlations = PAPER_TABLES,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Pearson ρ, Kendall τ, Spearman σ of every method against humans, per task and All (Table 3).

    System level correlates per-model mean scores (by default over the items rated for every model; equal
    means are ties); sample level correlates models within each item and averages over items. Intervals are
    95% BCa bootstrap intervals over items (--interval). Self-consistency files (n > 1 samples per judgment)
    give worst / best rows (whole samples ranked by --rank-by, each named "(sample k)") and the mean row. Cost
    sums the recorded usage. Empty writings are left out, as the authors did (--empty). Every table names its
    interval method, item policy and empty-writing convention, and counts the items used and the empty writings.
    """
    settings = correlations.settings()
    scores = _human_scores(human, strict, Console(stderr=True), human_dim)
    rows = correlate_results(load_results(results, strict=strict), scores, settings)
    print_tables(correlations.tables(rows, fmt), fmt)


@meta_app.command("agreement")
def agreement_cmd(
    human: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Human ratings, JSONL or CSV.")],
    kappa: Annotated[
        list[str] | None,
        typer.Option("--kappa", help="κ variants (repeatable): cohen (default, unweighted, as the paper), "
                     "cohen-linear, cohen-quadratic (weighted by how far apart the scores are), fleiss (all "
                     "raters of a writing at once, for 3+ raters)."),
    ] = None,
    alpha: Annotated[
        list[str] | None,
        typer.Option("--alpha", help="Krippendorff's α levels (repeatable): interval (default), ordinal, "
                     "nominal, ratio."),
    ] = None,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Inter-annotator agreement: κ, Pearson over rater pairs and Krippendorff's α, each row naming its variant.

    Default: Cohen's κ unweighted on scores rounded to integers and Pearson, over every pair of raters of a
    writing (the paper's two-rater protocol), and interval α over all ratings.
    """
    try:
        agr = agreement(_loaded(human, strict), kappa or ["cohen"], alpha or ["interval"])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    print_tables(_agreement_tables(agr), fmt)


def _loaded(path: Path, strict: bool) -> list[HumanRating]:
    report = SkipReport()
    ratings = load_ratings(path, strict=strict, report=report)
    _warn_skipped(Console(stderr=True), report)
    return ratings


def _agreement_tables(agr: Agreement) -> list[Table]:
    table = Table("Inter-annotator agreement", ["statistic", "variant", "value", "over", "n"], digits=3)
    for s in agr.statistics:
        table.add_row(s.name, s.variant, s.value, s.over, s.n)
    if agr.most_raters > 2:
        table.notes.append(f"some writings have up to {agr.most_raters} raters: Cohen's κ and Pearson pool every "
                           "rater pair of such a writing; --kappa fleiss uses all its raters at once")
    size = Table("Ratings", ["rater pairs", "writings", "raters", "most raters on one writing"])
    size.add_row(agr.pairs, agr.writings, agr.raters, agr.most_raters)
    return [table, size]


@meta_app.command("ablation")
@bundled("correlations", Correlations, group_of(Correlations, "level", "seed", "bootstrap", "interval", "items",
                                                "empty", "show_ci"))
def ablation_cmd(
    results: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="ToW judgment JSONL (with node scores and leaves).")
    ],
    human: HumanOpt,
    correlations: Correlations = PAPER_TABLES,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Table 5: the ToW root recomputed without each node (w/o) and with each node alone (w), vs humans.

    Uses the tree's own rule (node scores averaged, weighted by their number of scored leaves; with sampled
    weights, per sample and then averaged as the judge does), so no model is called; correlations as `meta
    correlate` computes them (same --interval, --items and --empty).
    """
    settings = correlations.settings()
    err = Console(stderr=True)
    scores = _human_scores(human, strict, err)
    report = SkipReport()
    judgments = load_judgments(results, strict=strict, report=report)
    _warn_skipped(err, report)
    rows = ablation_rows(judgments, scores, settings)
    tables = correlations.tables(rows, fmt, title="Ablation of ToW nodes")
    if stray := unreproduced_roots(judgments):
        warning = (f"{stray} stored roots are not the leaf-weighted mean of their node scores (e.g. ToW judged with "
                   "--samples n before each sample's nodes were stored keeps the first sample's nodes only): the "
                   "full-tree row differs from meta correlate; judging again stores them")
        err.print(f"[yellow]warning[/] {warning}", highlight=False)
        for table in tables:
            table.notes.append(f"warning: {warning}")
    print_tables(tables, fmt)


@meta_app.command("inconsistency")
def inconsistency_cmd(
    path: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="A judgment JSONL of a sampled judge (auto-planning with n samples, or ToW judged with --samples n) "
            "or a weight-sample JSONL ({item_id, sample, weights{leaf: w}} per line).",
        ),
    ],
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="auto (decide from the first row), autoplan (sub-score shares of sampled judgments), tow (sampled "
            "weights stored in ToW judgments) or weights (weight-sample file).",
        ),
    ] = "auto",
    match: Annotated[
        str,
        typer.Option(
            "--match",
            help="Auto-planning only: compare aspects across samples by name (only aspects every sample names alike) "
            "or by position (the k-th aspect of each sample).",
        ),
    ] = "name",
    sigma: Annotated[
        str,
        typer.Option(
            "--sigma",
            help="σ variant: sample (default; standard deviation with n − 1, what the paper's numbers are), "
            "population (1/n) or literal (sqrt of the summed squares, the formula as printed in section 5.3).",
        ),
    ] = "sample",
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Negotiation inconsistency (section 5.3): mean δ and σ of each leaf's share across sampled trials.

    Auto-planning: share l_k = s_k / S of each sample. ToW: l_k = the weight of each sampled negotiation.
    δ = Σ_{t≥2} |l_k(t) − l_k(1)|; σ = sqrt(Σ_t (l_k(t) − mean)² / (n − 1)) by default (see --sigma);
    both averaged over units and leaves. The output names the σ formula used.
    """
    if sigma not in SIGMA_FORMULAS:
        raise typer.BadParameter(f"--sigma must be one of {', '.join(SIGMA_FORMULAS)}, not {sigma!r}")
    if kind not in ("auto", "autoplan", "tow", "weights"):
        raise typer.BadParameter(f"--kind must be auto, autoplan, tow or weights, not {kind!r}")
    kind = detect_kind(path) if kind == "auto" else kind
    report = SkipReport()
    empty = 0
    if kind == "weights":
        trials, skipped = weight_trials(load_weight_samples(path, strict=strict, report=report))
    else:
        if match not in ("name", "position"):
            raise typer.BadParameter(f"--match must be name or position, not {match!r}")
        judgments = load_judgments(path, strict=strict, report=report)
        empty = empty_judgments(judgments)
        trials, skipped = (weight_trials(tow_weight_samples(judgments)) if kind == "tow"
                           else autoplan_trials(judgments, match))
    _warn_skipped(Console(stderr=True), report)
    print_tables(_inconsistency_tables(summarize(trials, skipped, sigma, empty), kind), fmt)


def _inconsistency_tables(result: Inconsistency, kind: str) -> list[Table]:
    unit = "writings" if kind == "autoplan" else "instructions"
    formula = f"{result.sigma_formula}: {SIGMA_FORMULAS[result.sigma_formula]}"
    columns = ["δ (mean)", "σ (mean)", "σ formula", unit, "trials", "skipped", "empty writings left out"]
    summary = Table(f"Negotiation inconsistency ({kind}; σ {result.sigma_formula})", columns, digits=3)
    summary.add_row(result.delta, result.sigma, formula, result.units, result.trials, result.skipped_units,
                    result.empty_left_out)
    summary.notes.append("skipped: units with fewer than two usable trials or no leaf shared by all trials")
    summary.notes.append(f"{result.empty_left_out} judgments of empty writings left out, as the authors' pipeline "
                         "judges none (an empty writing has no sampled shares; weights come from the instruction's "
                         "other writings)")
    per_leaf = Table(f"Per leaf (σ {formula})", ["leaf", "δ (mean)", "σ (mean)", unit], digits=3)
    for leaf, (delta, sigma, n) in result.per_leaf.items():
        per_leaf.add_row(leaf, delta, sigma, n)
    return [summary, per_leaf]
