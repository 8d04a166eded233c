"""One self-contained HTML page of saved results: leaderboard, heatmap, failures, provenance and every judgment.

The page is a static file (inline CSS and a few lines of vanilla JavaScript for sorting and filtering, no
external asset: a Content-Security-Policy forbids loading any) that can be mailed, attached to a pull request
or opened from a run directory. The policy allows exactly one script: `templates/report.js`, inserted verbatim
and named by its sha256 (`PageScript`), so even markup that slipped past escaping could not run a script.
It is drawn by the Jinja2 template `templates/report.html.j2` with autoescape on, so writings, instructions
and judge replies — untrusted text — can never become markup.

Numbers come from `report.leaderboard.build_leaderboard` (the same seed, bootstrap count and items as the run
that wrote the judgments, when a run directory is given) through the view records of `html_views`, so the page
agrees with `howtobench leaderboard` to the digit. Nothing here calls a model.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from howtobench.data.genres import GENRES
from howtobench.data.models import Item, Writing
from howtobench.data.paper import paper_table4
from howtobench.errors import DataError
from howtobench.judges.base import EmptyConvention, Judgment, check_empty
from howtobench.outputs import output_file, write_text_atomic
from howtobench.report import html_views as views
from howtobench.report.calibrated import calibrated_leaderboard
from howtobench.report.font import with_page_font
from howtobench.report.headline import closing_order, headlines
from howtobench.report.html_explorer import DEFAULT_LIMIT, choose_items, explorer
from howtobench.report.html_inputs import (
    ReportSources,
    data_dir_for,
    find_sources,
    load_given_writings,
    load_report_items,
    load_report_writings,
)
from howtobench.report.html_length import length_view
from howtobench.report.html_manifest import manifest_view, provenance
from howtobench.report.html_panel import panel_view
from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions, load_judgments
from howtobench.report.length_control import LENGTH_CONTROLLED, LengthSources, needs_sources
from howtobench.report.render import paper_lines
from howtobench.version import __version__

SMOKE_BANNER = (
    "Smoke run: the scores below come from the small embedded local model and only show that the pipeline "
    "works end to end. Do not read them as a ranking of the writers."
)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("howtobench.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class PageScript:
    """The page's one inline script and the CSP source that allows it: 'sha256-<base64 of its exact bytes>'."""

    text: str

    @property
    def csp_hash(self) -> str:
        digest = hashlib.sha256(self.text.encode("utf-8")).digest()
        return "sha256-" + base64.b64encode(digest).decode("ascii")


@lru_cache(maxsize=1)
def page_script() -> PageScript:
    return PageScript(resources.files("howtobench.report").joinpath("templates/report.js").read_text(encoding="utf-8"))


def genre_label(genre: str) -> str:
    g = GENRES.get(genre)
    return f"{g.en} · {g.zh}" if g else genre


def render_report(
    lb: Leaderboard,
    judgments: Sequence[Judgment],
    *,
    manifest: Mapping[str, Any] | None = None,
    items: Sequence[Item] | None = None,
    writings: Mapping[tuple[str, str], str] | None = None,
    explorer_limit: int = DEFAULT_LIMIT,
    sources: Sequence[str] = (),
) -> str:
    """The page for an already built leaderboard and the judgments it was built from."""
    by_id = {it.id: it for it in items or ()}
    tables = [t for t in views.leaderboard_tables(lb) if not t.metric.startswith(LENGTH_CONTROLLED)]
    context = {
        "lb": lb,
        "title": lb.title,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "toolkit": __version__,
        "sources": list(sources),
        "smoke_banner": SMOKE_BANNER if manifest and manifest.get("smoke") and not lb.notes else "",
        "bars": views.all_bars(lb),
        "headline": list(zip(headlines(lb), [c in lb.under_test for c in closing_order(lb)], strict=True)),
        "paper_notes": paper_lines(lb),
        "tables": tables,
        "length": length_view(lb),
        "panel": panel_view(judgments, lb.seed, lb.empty),
        "node_summary": views.node_summary(tables),
        "heatmap": views.heatmap(lb),
        "counts": views.counts_view(lb),
        "paired": views.paired_view(lb),
        "leaf_failures": views.leaf_failures(lb, judgments),
        "manifest": manifest_view(dict(manifest)) if manifest else None,
        "provenance": provenance(judgments),
        "explorer": explorer(lb, judgments, items=by_id, writings=writings or {}, limit=explorer_limit),
        "explorer_limit": explorer_limit,
        "have_items": bool(by_id),
        "genre_label": genre_label,
        "script": page_script(),
    }
    return with_page_font(_environment().get_template("report.html.j2").render(**context))


@dataclass(frozen=True)
class ReportOptions:
    """Choices of `howtobench report`; None means 'as the run recorded it' (else the leaderboard defaults)."""

    data_dir: Path | None = None
    seed: int | None = None
    n_boot: int | None = None
    paper: bool | None = None
    explorer_limit: int = DEFAULT_LIMIT
    title: str | None = None
    empty: EmptyConvention | None = None
    length_control: bool = False  # add the length-controlled section (report.html_length)
    writings: tuple[Path, ...] = ()  # the user's writings files, whose texts the explorer shows first
    calibration: Path | None = None  # a calibration file: calibrated tables beside the raw ones (report.calibrated)
    length_anchor: Path | None = None  # pad/truncate judgments: the judge's length slope (report.length_anchor)
    length_slopes: str | None = None  # pooled / per-model (report.length_per_model); None: as the run recorded it


def _run_items(items: list[Item] | None, manifest: Mapping[str, Any] | None) -> list[Item] | None:
    """A run's leaderboard counts only the items it selected; the manifest lists them."""
    wanted = (manifest or {}).get("items")
    if items is None or not isinstance(wanted, list):
        return items
    ids = set(wanted)
    return [it for it in items if it.id in ids]


def _title(sources: ReportSources, items: Sequence[Item] | None, options: ReportOptions) -> str:
    if options.title:
        return options.title
    m = sources.manifest or {}
    if m.get("name"):
        prefix = "SMOKE · " if m.get("smoke") else ""
        return f"{prefix}HoWToBench run {m['name']}" + (f" ({len(items)} items)" if items else "")
    return "HoWToBench report"


def _leaderboard_for(
    sources: ReportSources, judgments: Sequence[Judgment], items: Sequence[Item] | None, options: ReportOptions,
    lengths: LengthSources | None = None,
) -> Leaderboard:
    m = sources.manifest or {}
    seed = options.seed if options.seed is not None else int((m.get("seeds") or {}).get("bootstrap", 0))
    n_boot = options.n_boot if options.n_boot is not None else int(m.get("bootstrap", 1000))
    methods = {j.method for j in judgments}
    paper = options.paper
    if paper is None:  # a ToW run shows the paper's columns when it asked for them (config.yaml `paper`)
        paper = bool((sources.run_config or {}).get("paper")) and methods == {"tow"}
    empty = check_empty(options.empty or (sources.run_config or {}).get("empty") or "exclude")
    anchor = options.length_anchor or _recorded_anchor(sources.run_dir, sources.run_config)
    calibration = options.calibration or _recorded_path((sources.run_config or {}).get("calibration"))
    slopes = str(options.length_slopes or (sources.run_config or {}).get("length_slopes") or "pooled")
    return calibrated_leaderboard(judgments, LeaderboardOptions(
        nodes=True,
        seed=seed,
        n_boot=n_boot,
        items=items,
        paper=paper_table4() if paper else None,
        title=_title(sources, items, options),
        notes=[SMOKE_BANNER] if m.get("smoke") else [],
        empty=empty,
        length_controlled=options.length_control or anchor is not None or slopes != "pooled",
        lengths=lengths,
        length_anchor=load_judgments([anchor]) if anchor is not None else (),
        length_slopes=slopes,
        under_test=[str(name) for name in m.get("under_test") or ()],
    ), calibration)


def _recorded_anchor(run_dir: Path | None, config: Mapping[str, Any] | None) -> Path | None:
    """A run's anchor judgments: `run --length-anchor N` (recorded in config.yaml) judges them into
    anchor/<method>.jsonl (robustness.anchor); a run that recorded it but has no such file is an error."""
    if run_dir is None or not (config or {}).get("length_anchor"):
        return None
    path = run_dir / "anchor" / f"{(config or {}).get('method') or 'tow'}.jsonl"
    if not path.is_file():
        raise DataError(f"{run_dir}: config.yaml records length_anchor but {path} is missing (re-run to judge it)")
    return path


def _recorded_path(value: object) -> Path | None:
    """A path a run recorded in its config.yaml (its --calibration), so the run's report keeps its tables."""
    return Path(value) if isinstance(value, str) and value else None


def build_report(paths: Sequence[Path], options: ReportOptions | None = None) -> str:
    """Read judgment files and/or one run directory and return the HTML page."""
    options = options or ReportOptions()
    sources = find_sources(paths)
    judgments = load_judgments(sources.judgment_files)
    data_dir = data_dir_for(sources, options.data_dir)
    all_items = load_report_items(data_dir, {j.task for j in judgments})
    items = _run_items(all_items, sources.manifest)
    given = load_given_writings(options.writings, {(j.item_id, j.model) for j in judgments})
    lengths = (report_lengths(sources, data_dir, judgments, items, given)
               if options.length_control and needs_sources(judgments) else None)
    lb = _leaderboard_for(sources, judgments, items, options, lengths)
    return _render_with_texts(lb, judgments, sources, data_dir, items, options.explorer_limit, given)


def report_lengths(sources: ReportSources, data_dir: Path | None, judgments: Sequence[Judgment],
                   items: Sequence[Item] | None, given: Sequence[Writing]) -> LengthSources:
    """Lengths for judgments that predate them, from the same writings the explorer reads and the benchmark."""
    texts = load_report_writings(sources, data_dir, {(j.item_id, j.model) for j in judgments}, items, given)
    return LengthSources(writing_chars={(model, item): len(t) for (item, model), t in texts.items()},
                         reference_chars={it.id: len(it.reference) for it in items or ()})


def _render_with_texts(
    lb: Leaderboard,
    judgments: Sequence[Judgment],
    sources: ReportSources,
    data_dir: Path | None,
    items: Sequence[Item] | None,
    explorer_limit: int,
    given: Sequence[Writing] = (),
) -> str:
    """Load only the writings the explorer shows, then render."""
    shown = set(choose_items(list(views.latest_judgments(judgments).values()), explorer_limit)[0])
    wanted = {(j.item_id, j.model) for j in judgments if (j.task, j.item_id) in shown}
    writings = load_report_writings(sources, data_dir, wanted, items, given)
    names = [str(p) for p in sources.judgment_files]
    return render_report(lb, judgments, manifest=sources.manifest, items=items, writings=writings,
                         explorer_limit=explorer_limit, sources=names)


def default_report_path(paths: Sequence[Path]) -> Path:
    """Where `howtobench report` writes without -o: report.html inside the run directory when one is given (the
    page belongs with the run it shows, where `run` put its own), else report.html in the current folder."""
    run_dirs = [p for p in paths if p.is_dir()]
    return run_dirs[0] / "report.html" if run_dirs else Path("report.html")


def write_report(paths: Sequence[Path], out: Path, options: ReportOptions | None = None) -> Path:
    """Build the page and write it (UTF-8); returns the path written."""
    html = build_report(paths, options)
    write_text_atomic(output_file(out), html)
    return out

