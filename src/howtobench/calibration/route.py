"""What to do when `--compare` / `--baseline` names a model that is only a column of the paper's Table 4.

The paper publishes one score per model and task (and genre): no per-item scores, so there is nothing to pair
with a judged model's items. Rather than "unknown model", the user is told why and given the cheapest routes:
judge that model's shipped writings with their own judge on the items their model was judged on (the edge weights
J_W already negotiated for those items are then answered from the cache: only the leaf calls are paid), with an
estimate from the cost recorded in their own judgments; or place their model on the paper's scale with
`calibrate --to-paper`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from howtobench.data.paper import PaperTable, paper_table4
from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment


def paper_model(name: str, paper: PaperTable) -> str | None:
    """The release key of a paper column named by key or by the paper's abbreviation (DS-R1), else None."""
    if name in paper.models:
        return name
    lowered = name.strip().lower()
    return next((key for key, short in paper.abbreviations.items() if short.lower() == lowered), None)


def _estimate(judgments: Sequence[Judgment], n: int) -> str:
    priced = [j.usage for j in judgments if j.usage.calls and not j.usage.unpriced_calls]
    if not priced:
        return "its cost: `--dry-run` prints the estimate before anything is spent"
    per = sum(u.cost_usd for u in priced) / len(priced)
    return (f"about ${per * n:.2f} at the ${per:.4f} per writing your {len(priced)} judgments recorded, at most: "
            "`--dry-run` prints the exact estimate")


def paper_route(name: str, flag: str, judgments: Sequence[Judgment], columns: Collection[str]) -> str | None:
    """The one line that explains a paper-only model in `flag` and the routes to a comparison; None when `name` is
    no column of the paper's (or is one of the judged columns)."""
    paper = paper_table4()
    key = paper_model(name, paper)
    if key is None or name in columns:
        return None
    items = sorted({(j.task, j.item_id) for j in judgments})
    judges = sorted({j.judge_model for j in judgments if j.judge_model})
    judge = f" --judge-model {judges[0]}" if len(judges) == 1 else ""
    tasks = sorted({t for t, _ in items})
    task = "".join(f" --task {t}" for t in tasks) if len(tasks) < 3 else ""
    return (f"{flag}: {key} is a published column of the paper's Table 4 ({paper.judge} judge): values per task "
            f"and genre, no per-item scores, so it cannot be paired with your items. Cheapest route: judge its shipped "
            f"writings on your {len(items)} items, `howtobench judge --models {key}{judge}{task} --subset "
            f"{len(items)} ...` with the --subset/--seed (or --ids) your model was judged on, so the edge weights "
            f"already negotiated for them come from the cache ({_estimate(judgments, len(items))}), then compare; or "
            "put your model on the paper's scale: `howtobench calibrate --to-paper` with your judge's flags, then "
            "`leaderboard --calibration FILE`")


def check_paper_rows(compare: Sequence[str] | None, baseline: str | None, judgments: Sequence[Judgment]) -> None:
    """Before a leaderboard is built: a `--compare` / `--baseline` name that is only a paper column stops with the
    route (`paper_route`) instead of "unknown model"."""
    multi = len({j.method for j in judgments}) > 1
    columns = {f"{j.model} [{j.method}]" if multi else j.model for j in judgments}
    asked = [("--compare", name) for name in compare or ()] + ([("--baseline", baseline)] if baseline else [])
    for flag, name in asked:
        line = paper_route(name, flag, judgments, columns)
        if line is not None:
            raise ConfigError(line)
