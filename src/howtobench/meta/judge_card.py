"""A report card for a judge (Judgemark-v2's questions, on our data): how stable, how separating, how
length-sensitive, how much in agreement with other judges and with people, and what it costs.

A judge is a (judge model, method) pair, labelled "model [method]" (the method alone for one that calls no model,
the file name when a file mixes judge models): ToW and a baseline run by one judge model are two judges, never one
judge's two runs. A file of panel judgments (`judge --panel`) gives a judge per panel member, plus the panel
itself. A label met in several files is one judge judged several times: its runs. Per judge:

- stability: the mean, over writings, of the standard deviation of the roots of its `--samples` draws
  (`Judgment.samples`, writings with two draws or more), and of its roots over repeated runs (writings judged in
  two runs or more) — "-" when the files hold no such repeats;
- separability: the models ordered by mean root; how many adjacent pairs differ at 95% (a paired bootstrap
  interval over shared items excluding 0, `howtobench.stats.paired_compare`);
- length sensitivity: β of `stats.length_fit` (score on ln(writing / reference chars) with model and item
  effects) over all its writings, with a bootstrap interval — "-" when the judgments record no lengths;
- agreement: Pearson r with every other judge, and with the mean human rating when `--human` is given, over
  the writings both scored. A panel's members are not "other judges" of the panel, nor the panel of its members
  (a mean agrees with its own parts by construction: 0.70 against 0.62 without): those rows are labelled
  "member of" / "panel of" and left out of the mean agreement;
- cost per 1,000 writings: dollars (unknown when a call had no price), calls and tokens.

Failed judgments have no score here either; empty writings are left out (the authors' convention).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from howtobench.document import Table
from howtobench.judges.base import Judgment, counted_score
from howtobench.meta.human import WritingKey
from howtobench.meta.length import pair_stat
from howtobench.meta.plots import new_figure, save_figure
from howtobench.stats import paired_compare, rng_for
from howtobench.stats.length_fit import Observations, bootstrap, fit, identified, interval

Runs = dict[str, list[list[Judgment]]]


@dataclass(frozen=True)
class Judges:
    """Every judge's runs by label, and for a panel its members' labels (for a member, the panels it is in)."""

    runs: Runs
    related: dict[str, set[str]]


def _label(name: str | None, method: str) -> str:
    return f"{name} [{method}]" if name else method


def judges_of(files: Mapping[Path, Sequence[Judgment]]) -> Judges:
    """Every judge's runs: each method of a file is one run of its judge (judge model, method); a panel file one run
    of each member and of the panel."""
    runs: Runs = {}
    related: dict[str, set[str]] = {}
    for path, judgments in files.items():
        for method in dict.fromkeys(j.method for j in judgments):
            own = [j for j in judgments if j.method == method]
            members: dict[str, list[Judgment]] = {}
            for j in own:
                for name, m in (j.panel.members.items() if j.panel is not None else ()):
                    members.setdefault(_label(f"{name} ({m.judge_model})" if m.judge_model else name, method),
                                       []).append(m)
            models = {j.judge_model for j in own if j.judge_model}
            label = _label(f"panel ({own[0].panel.aggregate})", method) if members and own[0].panel else \
                _label(models.pop() if len(models) == 1 else path.stem if models else None, method)
            runs.setdefault(label, []).append(own)
            for name, js in members.items():
                runs.setdefault(name, []).append(js)
                related.setdefault(label, set()).add(name)
                related.setdefault(name, set()).add(label)
    return Judges(runs, related)


def scores(judgments: Sequence[Judgment]) -> dict[WritingKey, float]:
    """Root per (item, model): failures and empty writings have none."""
    out = {}
    for j in judgments:
        v = counted_score(j)
        if v is not None:
            out[(j.item_id, j.model)] = v
    return out


def sample_spread(judgments: Sequence[Judgment]) -> tuple[float, int]:
    """Mean standard deviation of the sample roots, and over how many writings."""
    sds = [float(np.std(v, ddof=1)) for j in judgments
           if len(v := [s.score for s in j.samples if s.score is not None]) >= 2]
    return (float(np.mean(sds)) if sds else float("nan")), len(sds)


def run_spread(runs: Sequence[Sequence[Judgment]]) -> tuple[float, int]:
    """Mean standard deviation of a writing's roots over the runs that scored it, and over how many writings."""
    per_run = [scores(r) for r in runs]
    keys = {k for s in per_run for k in s}
    sds = [float(np.std(v, ddof=1)) for k in keys if len(v := [s[k] for s in per_run if k in s]) >= 2]
    return (float(np.mean(sds)) if sds else float("nan")), len(sds)


def separability(judgments: Sequence[Judgment], *, seed: int, n_boot: int) -> tuple[int, int]:
    """(adjacent model pairs separated at 95%, adjacent pairs) with models ordered by mean root."""
    by_model: dict[str, dict[tuple[str, str], float]] = {}
    for j in judgments:
        v = counted_score(j)
        if v is not None:
            by_model.setdefault(j.model, {})[(j.task, j.item_id)] = v
    order = sorted(by_model, key=lambda m: -float(np.mean(list(by_model[m].values()))))
    items = sorted({k for s in by_model.values() for k in s})
    arrays = {m: np.array([by_model[m].get(k, np.nan) for k in items]) for m in order}
    separated = 0
    for first, second in zip(order, order[1:], strict=False):
        p = paired_compare(first, second, arrays[first], arrays[second], n_boot=n_boot,
                           rng=rng_for(seed, f"card|{first}|{second}"))
        separated += p.ci_low is not None and p.ci_high is not None and (p.ci_low > 0 or p.ci_high < 0)
    return separated, max(len(order) - 1, 0)


def length_beta(judgments: Sequence[Judgment], *, seed: int, n_boot: int
                ) -> tuple[float, tuple[float, float] | None, int]:
    """β of the length model over every scored writing with both lengths (NaN without two models or lengths)."""
    rows = [(j, v) for j in judgments if (v := counted_score(j)) is not None
            and j.writing_chars and j.reference_chars]
    models = sorted({j.model for j, _ in rows})
    items = sorted({(j.task, j.item_id) for j, _ in rows})
    if len(models) < 2 or len(rows) < 3:
        return float("nan"), None, len(rows)
    m_ix, i_ix = {m: k for k, m in enumerate(models)}, {it: k for k, it in enumerate(items)}
    obs = Observations(model=np.array([m_ix[j.model] for j, _ in rows]),
                       item=np.array([i_ix[(j.task, j.item_id)] for j, _ in rows]),
                       x=np.array([math.log(j.writing_chars / j.reference_chars) for j, _ in rows]),  # type: ignore[operator]
                       y=np.array([v for _, v in rows], dtype=float), n_models=len(models), n_items=len(items))
    if not identified(obs):
        return float("nan"), None, len(rows)
    reps = bootstrap(obs, n_boot, rng_for(seed, "card|length")) if n_boot > 0 else None
    return fit(obs).beta, interval(reps.beta) if reps is not None else None, len(rows)


def cost_per_thousand(judgments: Sequence[Judgment]) -> tuple[str, float, float]:
    """(dollars per 1,000 writings as text, calls and tokens per 1,000 writings)."""
    n = len(judgments)
    if n == 0:
        return "-", float("nan"), float("nan")
    usage = [j.usage for j in judgments]
    unpriced = sum(u.unpriced_calls for u in usage)
    dollars = sum(u.cost_usd for u in usage) * 1000 / n
    text = f"unknown ({unpriced} calls without a price)" if unpriced else f"${dollars:,.2f}"
    calls = sum(u.calls for u in usage) * 1000 / n
    tokens = sum(u.prompt_tokens + u.completion_tokens for u in usage) * 1000 / n
    return text, calls, tokens


@dataclass(frozen=True)
class Card:
    judge: str
    table: Table
    separated: tuple[int, int]
    beta: float
    mean_agreement: float


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def card(label: str, judges: Judges, human: Mapping[WritingKey, float] | None, *, seed: int, n_boot: int) -> Card:
    """The report card of one judge (its first run for everything but the run-to-run spread)."""
    runs = judges.runs
    first = runs[label][0]
    table = Table(f"Report card: {label}", ["quantity", "value", "detail"], digits=3)
    mine = scores(first)
    table.add_row("writings scored", len(mine), f"{len(first)} judged, {len(runs[label])} run(s)")
    spread, n = sample_spread(first)
    table.add_row("stability: spread over --samples draws", _fmt(spread), f"mean SD of sample roots, {n} writings")
    spread, n = run_spread(runs[label])
    table.add_row("stability: spread over repeated runs", _fmt(spread), f"mean SD of roots across runs, {n} writings")
    separated = separability(first, seed=seed, n_boot=n_boot)
    table.add_row("separability", f"{separated[0]} of {separated[1]}",
                  "adjacent model pairs whose paired 95% bootstrap interval excludes 0")
    beta, ci, n = length_beta(first, seed=seed, n_boot=n_boot)
    table.add_row("length sensitivity β", _fmt(beta),
                  (f"95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}], " if ci else "") + f"points per unit ln(length / reference "
                  f"length), model and item effects, {n} writings" if n else "no judgment records its lengths")
    rs = []
    for other, other_runs in runs.items():
        if other == label:
            continue
        st = _pearson(mine, scores(other_runs[0]))
        if other in judges.related.get(label, ()):
            part = "member of" if other.startswith("panel (") else "panel of"
            table.add_row(f"agreement with {other} ({part})", _fmt(st[0]), f"Pearson r over {st[1]} shared writings; "
                          "not an independent judge: left out of the mean agreement")
            continue
        rs.append(st[0])
        table.add_row(f"agreement with {other}", _fmt(st[0]), f"Pearson r over {st[1]} shared writings")
    if human is not None:
        st = _pearson(mine, human)
        table.add_row("agreement with humans", _fmt(st[0]), f"Pearson r with the mean rating, {st[1]} writings")
    dollars, calls, tokens = cost_per_thousand(first)
    table.add_row("cost per 1,000 writings", dollars, f"{_fmt(calls, 0)} calls, {_fmt(tokens, 0)} tokens")
    finite = [r for r in rs if not math.isnan(r)]
    return Card(label, table, separated, beta, float(np.mean(finite)) if finite else float("nan"))


def _pearson(a: Mapping[WritingKey, float], b: Mapping[WritingKey, float]) -> tuple[float, int]:
    keys = sorted(set(a) & set(b))
    st = pair_stat("a", "b", np.array([a[k] for k in keys]), np.array([b[k] for k in keys]))
    return st.r, st.n


def cards(files: Mapping[Path, Sequence[Judgment]], human: Mapping[WritingKey, float] | None = None, *,
          seed: int = 0, n_boot: int = 1000) -> list[Card]:
    judges = judges_of(files)
    return [card(label, judges, human, seed=seed, n_boot=n_boot) for label in judges.runs]


def card_plots(found: Sequence[Card], out_dir: Path) -> list[Path]:
    """One figure: separability share, length β and mean agreement with the other judges, a bar per judge."""
    fig, axes = new_figure(11.0, 4.0)
    fig.clear()
    panels = [("adjacent pairs separated (share)", [c.separated[0] / c.separated[1] if c.separated[1] else 0.0
                                                    for c in found]),
              ("length β", [0.0 if math.isnan(c.beta) else c.beta for c in found]),
              ("mean r with other judges", [0.0 if math.isnan(c.mean_agreement) else c.mean_agreement
                                            for c in found])]
    labels = [c.judge for c in found]
    for k, (title, values) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.barh(labels, values)
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=7)
    return save_figure(fig, out_dir, "judge-cards")
