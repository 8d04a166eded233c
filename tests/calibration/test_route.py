"""`--compare` / `--baseline` naming a model that is only a column of the paper: the route, never "unknown model"."""

from __future__ import annotations

from howtobench.calibration.route import paper_model, paper_route
from howtobench.data.paper import paper_table4
from howtobench.judges.base import Judgment
from howtobench.llm.types import Usage


def mine(n: int, cost: float | None) -> list[Judgment]:
    usage = Usage(calls=9, cost_usd=cost or 0.0, unpriced_calls=0 if cost is not None else 9)
    return [Judgment(method="tow", item_id=f"g{k}", model="my-model", task="guide", genre="prose", score=6.0,
                     judge_model="gpt-4.1", usage=usage) for k in range(n)]


def test_paper_model_by_key_or_abbreviation() -> None:
    paper = paper_table4()
    assert paper_model("deepseek-r1", paper) == "deepseek-r1"
    assert paper_model("DS-R1", paper) == "deepseek-r1"
    assert paper_model("my-model", paper) is None


def test_route_names_the_reason_the_command_and_its_cost() -> None:
    line = paper_route("deepseek-r1", "--compare", mine(20, 0.01), ["my-model"])
    assert line is not None and "\n" not in line
    assert line.startswith("--compare: deepseek-r1 is a published column of the paper's Table 4 (gpt-4o judge)")
    assert "no per-item scores" in line
    assert "`howtobench judge --models deepseek-r1 --judge-model gpt-4.1 --task guide --subset 20 ...`" in line
    assert "about $0.20 at the $0.0100 per writing your 20 judgments recorded" in line
    assert "edge weights already negotiated" in line and "calibrate --to-paper" in line


def test_route_without_prices_points_to_the_dry_run() -> None:
    line = paper_route("DS-R1", "--baseline", mine(3, None), ["my-model"])
    assert line is not None and "--dry-run` prints the estimate" in line


def test_no_route_for_a_judged_column_or_an_unknown_name() -> None:
    assert paper_route("deepseek-r1", "--compare", mine(2, 0.01), ["deepseek-r1", "my-model"]) is None
    assert paper_route("nobody", "--compare", mine(2, 0.01), ["my-model"]) is None
