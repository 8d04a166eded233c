"""A panel stopped by --max-cost lets its other judges' calls in flight land (issue 34, item 6): judge a is fast,
dear and takes one call at a time, judge b slow; a's first answer passes the limit, so a's next call stops the
command while b's calls are on the wire. Those calls are answered (and billed)
by b's server whatever the client does: cancelled, they were lost and paid again on resume. The fake judges
remember the digest of every request they answered; the resumed run sends none of them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fake_server import FakeServer, Reply
from howtobench.cli.main import app
from howtobench.errors import BudgetExceeded
from judge_replies import server_handler


def billed(tokens: int, delay: float = 0.0) -> Any:
    """ToW replies that say they used `tokens` prompt tokens, after `delay` seconds."""
    answer = server_handler()

    def handler(request: dict[str, Any]) -> Reply:
        reply = answer(request)
        reply.usage, reply.delay = {"prompt_tokens": tokens, "completion_tokens": 0}, delay
        return reply

    return handler


def test_a_budget_stop_lets_the_other_judges_calls_land_and_the_resume_repeats_none(tmp_path: Path,
                                                                                    bench_root: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("judge-a: {input: 10.0, output: 0.0}\njudge-b: {input: 10.0, output: 0.0}\n", encoding="utf-8")
    with FakeServer(billed(100_000)) as a, FakeServer(billed(10, delay=2.0)) as b:
        panel = tmp_path / "panel.yaml"
        panel.write_text(f"judges:\n  - {{name: a, base_url: '{a.base_url}', model: judge-a, concurrency: 1}}\n"
                         f"  - {{name: b, base_url: '{b.base_url}', model: judge-b}}\n", encoding="utf-8")
        out = tmp_path / "panel.jsonl"
        args = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "2", "--models", "deepseek-chat",
                "--panel", str(panel), "--workspace", str(tmp_path / "ws"), "-o", str(out), "--no-progress",
                "--no-preflight", "--prices", str(prices)]
        stopped = CliRunner().invoke(app, [*args, "--max-cost", "0.5"])
        assert isinstance(stopped.exception, BudgetExceeded), stopped.output  # $1 per call of judge a
        in_flight_at_b = len(b.requests)
        assert len(a.requests) == 1 and in_flight_at_b > 0  # b's calls were on the wire
        assert len(b.answered) == in_flight_at_b  # and answered before the command ended
        resumed = CliRunner().invoke(app, args)
        assert resumed.exit_code == 0, resumed.output
        assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["ok", "ok"]
        assert a.repeated == 0 and b.repeated == 0  # no call answered before the stop was sent again
