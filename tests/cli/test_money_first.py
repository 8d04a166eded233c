"""Money first: the estimate before the first call, ask / refuse above the threshold, unknown prices shown as
unknown, user prices on real calls, and --max-cost stopping cleanly and resumably."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli import money
from howtobench.cli.main import app

JUDGE = "gpt-4o-2024-11-20"  # in the built-in price table


def invoke(args: list[str], input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, input=input)
    return result.exit_code, result.output + (str(result.exception) if result.exception else "")


def run_args(server: FakeServer, data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--data", str(data), "--task", "guide", "--limit", "2", "--method", "single",
            "--base-url", server.base_url, "--model", "my-model", "--judge-base-url", server.base_url,
            "--judge-model", JUDGE, "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run"),
            "--bootstrap", "10", "--no-progress", "--max-tokens", "100",
            "--no-preflight", *extra]  # the calls counted here are the work's (the preflight has its own tests)


def test_estimate_comes_first_and_unknown_prices_stay_unknown(fake_server: FakeServer, tmp_path: Path,
                                                             bench_root: Path) -> None:
    fake_server.handler = default_handler
    code, out = invoke(run_args(fake_server, bench_root, tmp_path))
    assert code == 0, out
    assert out.lstrip().startswith("howtobench run — estimate before the first call")
    lines = out.splitlines()
    writer = next(k for k, line in enumerate(lines) if line.strip().startswith("writer · my-model: 2 calls"))
    judge = next(k for k, line in enumerate(lines) if line.strip().startswith(f"judge · {JUDGE}: 2 calls"))
    assert lines[writer + 1].strip() == "cost unknown"  # never $0
    assert re.fullmatch(r"expected ~\$\d+\.\d\d \(at most ~\$\d+\.\d\d\)", lines[judge + 1].strip())
    assert "+ unknown (my-model: no price" in out and re.search(r"time: expected [\w~ ]+, at most", out)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["usage"]["generation"]["unpriced_calls"] == 2  # the real run: unknown, never $0
    assert manifest["usage"]["baseline:single"]["unpriced_calls"] == 0


def test_above_the_threshold_without_a_terminal_nothing_is_sent(fake_server: FakeServer, tmp_path: Path,
                                                                bench_root: Path) -> None:
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"))
    assert code != 0 and "no terminal to ask on: nothing was sent. Pass --yes" in out
    assert fake_server.requests == [] and not (tmp_path / "run" / "judgments").exists()
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0", "--yes"))
    assert code == 0, out
    assert len(fake_server.requests) == 4


def test_on_a_terminal_it_asks(fake_server: FakeServer, tmp_path: Path, bench_root: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(money, "stdin_is_terminal", lambda: True)
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"), input="n\n")
    # Declining is the user's choice, not a bug: exit 2 like the refusal without a terminal (1 is a bug).
    assert code == 2 and "Go ahead and spend at most ~$" in out
    assert "declined: nothing was sent; re-run the same command to be asked again" in out
    assert fake_server.requests == []
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"), input="y\n")
    assert code == 0, out
    assert len(fake_server.requests) == 4  # 2 writings + 2 single-judge calls


def priced_handler(request: dict[str, Any]) -> Reply:
    """1,000 prompt tokens per call: $0.01 at the $10 / M tokens of the test's price table."""
    return Reply.text("一篇文章。", usage={"prompt_tokens": 1000, "completion_tokens": 0})


def test_max_cost_stops_cleanly_and_a_rerun_resumes(fake_server: FakeServer, tmp_path: Path,
                                                    bench_root: Path) -> None:
    fake_server.handler = priced_handler
    prices = tmp_path / "prices.yaml"
    prices.write_text("my-model: {input: 10.0, output: 10.0}\n", encoding="utf-8")
    out_file = tmp_path / "w.jsonl"
    args = ["generate", "--data", str(bench_root), "--task", "open", "--limit", "10", "--base-url",
            fake_server.base_url, "--model", "my-model", "--concurrency", "1", "--workspace", str(tmp_path / "ws"),
            "-o", str(out_file), "--no-progress", "--prices", str(prices), "--no-preflight"]
    code, out = invoke([*args, "--max-cost", "0.025"])
    assert code != 0 and "--max-cost $0.03 reached" in out.replace("0.025", "0.03")
    assert len(fake_server.requests) == 3  # $0.01 each: the 4th call was refused at $0.03 accounted
    assert len(out_file.read_text(encoding="utf-8").splitlines()) == 3  # finished work kept, nothing half-written
    code, out = invoke(args)
    assert code == 0, out
    assert len(fake_server.requests) == 10 and len(out_file.read_text(encoding="utf-8").splitlines()) == 10
    code, out = invoke(["llm", "usage", "--workspace", str(tmp_path / "ws"), "--format", "json"])
    assert sum(row["cost_usd"] for row in json.loads(out)) == pytest.approx(0.10)  # user prices on real calls


def test_max_cost_needs_a_price(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--max-cost", "1"))
    assert code != 0 and "--max-cost cannot be kept: no price is known for my-model" in out
    assert fake_server.requests == []


# ------------------------------------------------------------------ robustness and perturb (issue 15 point 2)


def priced_json_handler(request: dict[str, Any]) -> Reply:
    """Schema-shaped judge replies and echoed rewrites, each billed 1,000 prompt tokens ($0.01 at $10 / M)."""
    reply = default_handler(request)
    reply.usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    return reply


def write_prices(tmp_path: Path) -> Path:
    prices = tmp_path / "prices.yaml"
    prices.write_text("fake-judge: {input: 10.0, output: 10.0}\nfake-writer: {input: 10.0, output: 10.0}\n",
                      encoding="utf-8")
    return prices


def robustness_args(server: FakeServer, data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["robustness", "--run-dir", str(tmp_path / "rob"), "--methods", "single,bleu", "--kinds",
            "transfer-poem,drop", "--n", "2", "--per-model", "1", "--task", "open", "--bootstrap", "10", "--data",
            str(data), "--workspace", str(tmp_path / "ws"), "--format", "json", "--prices", str(write_prices(tmp_path)),
            "--judge-base-url", server.base_url, "--judge-model", "fake-judge", "--judge-concurrency", "1",
            "--base-url", server.base_url, "--model", "fake-writer", "--concurrency", "1", "--no-preflight", *extra]


def test_robustness_shows_the_estimate_refuses_without_a_terminal_and_stops_at_max_cost(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = priced_json_handler
    code, out = invoke(robustness_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"))
    assert code != 0 and "no terminal to ask on: nothing was sent" in out
    assert fake_server.requests == [] and not (tmp_path / "rob" / "judgments").exists()
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "howtobench robustness — estimate before the first call (nothing has been sent yet)"
    assert lines[1].startswith("writer · fake-writer: 2 calls")  # the two transfers still to write
    assert lines[3].startswith("judge · fake-judge: 6 calls")  # 2 originals + 2 dropped + 2 transferred, once each
    assert re.match(r"total: 8 calls, expected ~\$[\d.]+, at most ~\$", lines[5])
    code, out = invoke(robustness_args(fake_server, bench_root, tmp_path, "--dry-run"))
    assert code == 0 and "writer · fake-writer" in out and fake_server.requests == []
    code, out = invoke(robustness_args(fake_server, bench_root, tmp_path, "--yes", "--max-cost", "0.025"))
    assert code != 0 and "--max-cost $0.03 reached" in out.replace("0.025", "0.03"), out
    # 2 rewrites ($0.02), 1 judgment ($0.03 accounted), then the next judge call is refused before it is sent
    assert [r["model"] for r in fake_server.requests] == ["fake-writer", "fake-writer", "fake-judge"]
    judged = (tmp_path / "rob" / "judgments" / "single.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(judged) == 1
    code, out = invoke(robustness_args(fake_server, bench_root, tmp_path, "--yes"))  # resumes: 5 judgments left
    assert code == 0, out
    assert [r["model"] for r in fake_server.requests[3:]] == ["fake-judge"] * 5


def test_perturb_transfer_shows_the_estimate_and_stops_at_max_cost(fake_server: FakeServer, tmp_path: Path,
                                                                   bench_root: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server.handler = priced_json_handler
    source = bench_root / "open" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    rows = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()][:3]
    writings = tmp_path / "three.jsonl"
    writings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["perturb", str(writings), "--kind", "transfer-letter", "-o", str(tmp_path / "out.jsonl"),
            "--base-url", fake_server.base_url, "--model", "fake-writer", "--concurrency", "1",
            "--workspace", str(tmp_path / "ws"), "--prices", str(write_prices(tmp_path)), "--no-preflight"]
    code, out = invoke([*args, "--confirm-above", "0"])
    assert code != 0 and fake_server.requests == []
    assert out.lstrip().startswith("howtobench perturb — estimate before the first call")
    assert "writer · fake-writer: 3 calls" in out and "nothing was sent. Pass --yes" in out
    with monkeypatch.context() as terminal:  # on a terminal it asks; "n" sends nothing
        terminal.setattr(money, "stdin_is_terminal", lambda: True)
        code, out = invoke([*args, "--confirm-above", "0"], input="n\n")
    assert code == 2 and "Go ahead and spend at most ~$" in out and fake_server.requests == []
    code, out = invoke([*args, "--max-cost", "0.015"])
    assert code != 0 and "--max-cost $0.01 reached" in out.replace("0.015", "0.01"), out
    # the two rewrites paid for are in the output, appended as they were made
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    sent = [json.loads(line)["infer_id"] for line in rows]
    assert len(fake_server.requests) == 2 and [w["infer_id"] for w in written] == sent[:2]
    code, out = invoke([*args, "--no-cache", "--dry-run"])
    assert code == 0 and "note: 1 of 3 writing(s) still to perturb" in out and len(fake_server.requests) == 2
    code, out = invoke([*args, "--no-cache"])  # resumes from the output file (not the cache): the third alone is sent
    assert code == 0, out
    assert "writer · fake-writer: 1 call, " in out  # not "1 calls" (issue 40)
    said = " ".join(out.split())
    assert "transfer-letter: wrote 1 perturbed writings to" in said and "(2 already there from an earlier run)" in said
    third = json.loads(rows[2])["output"][:40]
    assert len(fake_server.requests) == 3 and third in fake_server.requests[2]["messages"][-1]["content"]
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    assert [w["infer_id"] for w in written] == sent and {w["model"] for w in written} == {
        "gpt-4o-2024-11-20+transfer-letter"}
    code, out = invoke([*args, "--kind", "drop"])  # the same output, another kind: resuming would mix them
    assert code != 0 and "out.jsonl:1 holds a writing perturbed with --kind transfer-letter --seed 0, not --kind " \
        "drop --seed 0: write to another -o" in " ".join(out.split()), out
    elsewhere = [tmp_path / "drop.jsonl" if arg == str(tmp_path / "out.jsonl") else arg for arg in args]
    code, out = invoke([*map(str, elsewhere), "--kind", "drop", "--confirm-above", "0"])
    assert code == 0 and "estimate before the first call" not in out  # a rule-based kind costs nothing: no screen


def test_a_spinner_runs_while_the_estimate_is_worked_out(fake_server: FakeServer, tmp_path: Path,
                                                         bench_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Working out the plan renders every prompt (~30 s for --release): a spinner says so, before any call."""
    from contextlib import contextmanager

    seen: list[tuple[str, int]] = []

    @contextmanager
    def noting_step(message: str, enabled: bool = True) -> Any:
        seen.append((message, len(fake_server.requests)))
        yield

    monkeypatch.setattr(money, "step", noting_step)
    code, out = invoke(run_args(fake_server, bench_root, tmp_path))
    assert code == 0, out
    assert seen == [("working out every call this run would make and its cost (nothing is sent yet) ...", 0)]
