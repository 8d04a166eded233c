"""`run_benchmark` end to end against the fake server: generate, judge with a registered judge, tabulate, resume."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fake_server import FakeServer, Reply, default_handler
from howtobench.config import EndpointConfig
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.judges.base import JUDGES, Judgment, register_judge
from howtobench.judges.job import judge_options, prompt_language_for
from howtobench.llm.types import ChatRequest, LLMClient
from howtobench.run import RunSettings, run_benchmark
from howtobench.steps.settings import Execution, Selection

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}},
    "required": ["score"],
}


class _LengthJudge:
    """A one-call test judge: asks the server for a schema-shaped score (the fake server answers deterministically)."""

    method = "test-llm"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        req = ChatRequest(
            messages=({"role": "user", "content": f"{item.id}\n{writing.output[:200]}"},),
            response_schema=SCHEMA,
            purpose="leaf:test",
        )
        result = await self.client.chat(req)
        score = float(result.data["score"]) if result.ok and result.data else None
        return Judgment(
            method=self.method,
            item_id=item.id,
            model=writing.model,
            task=item.task,
            genre=item.genre,
            score=score,
            status="ok" if score is not None else "failed",
            judge_model=self.client.model,
            usage=result.usage,
        )


@pytest.fixture(autouse=True)
def _registered() -> None:
    if "test-llm" not in JUDGES:
        register_judge("test-llm")(lambda **kw: _LengthJudge(kw["client"]))


def _settings(tmp_path: Path, server: FakeServer, bench_root: Path, select: dict[str, Any] | None = None,
              **kw: Any) -> RunSettings:
    """The test run's settings; `select` overrides fields of its selection, `kw` the others."""
    endpoint = EndpointConfig(model="fake-writer", base_urls=(server.base_url,), max_retries=0)
    judge = EndpointConfig(model="fake-judge", base_urls=(server.base_url,), max_retries=0)
    selection = Selection(**{"data_dir": bench_root, "limit": 1, "models": ("deepseek-r1", "gpt-4o-2024-11-20"),
                             **(select or {})})
    base: dict[str, Any] = dict(
        name="t",
        run_dir=tmp_path / "run",
        selection=selection,
        execution=Execution(workspace=tmp_path / "ws", progress=False),
        method="test-llm",
        writer=endpoint,
        judge=judge,
        bootstrap=200,
    )
    return RunSettings(**{**base, **kw})


async def test_run_end_to_end_and_resume(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    settings = _settings(tmp_path, fake_server, bench_root)
    result = await run_benchmark(settings)
    board = result.leaderboard
    assert set(board.columns) == {"fake-writer", "deepseek-r1", "gpt-4o-2024-11-20"}
    assert all(c.judged == 3 and c.failed == 0 for c in board.counts.values())  # 1 item per task
    gen_calls = [r for r in fake_server.requests if "response_format" not in r]
    judge_calls = [r for r in fake_server.requests if "response_format" in r]
    assert (len(gen_calls), len(judge_calls)) == (3, 9)
    run_dir = settings.run_dir
    for name in ("config.yaml", "manifest.json", "leaderboard.md", "leaderboard.json", "leaderboard.csv"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "writings" / "fake-writer.jsonl").is_file()
    assert (run_dir / "judgments" / "test-llm.jsonl").is_file()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge"]["model"] == "fake-judge" and manifest["writer"]["model"] == "fake-writer"
    assert manifest["usage"]["generation"]["calls"] == 3 and manifest["usage"]["leaf:test"]["calls"] == 9
    assert len(manifest["data"]["aligned_sha256"]["guide"]) == 64
    assert manifest["smoke"] is False and "SMOKE" not in (run_dir / "leaderboard.md").read_text(encoding="utf-8")

    first = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    fake_server.reset()
    again = await run_benchmark(settings)
    assert fake_server.requests == []  # everything was already on disk
    second = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    assert first["cells"] == second["cells"] and again.leaderboard.columns == board.columns


async def test_run_dir_refuses_another_judge(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    await run_benchmark(_settings(tmp_path, fake_server, bench_root, release=False))
    other = EndpointConfig(model="other-judge", base_urls=(fake_server.base_url,))
    with pytest.raises(ConfigError, match="another --run-dir"):
        await run_benchmark(_settings(tmp_path, fake_server, bench_root, release=False, judge=other))


async def test_given_writings_without_generation(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    mine = tmp_path / "mine.jsonl"
    first_guide = json.loads((bench_root / "guide" / "aligned.jsonl").read_text(encoding="utf-8").splitlines()[0])
    mine.write_text(
        json.dumps({"infer_id": first_guide["infer_id"], "model": "mine", "output": "正文"}) + "\n", "utf-8"
    )
    settings = _settings(
        tmp_path, fake_server, bench_root, {"writings": (mine,), "tasks": ("guide",)}, generate=False, release=False
    )
    result = await run_benchmark(settings)
    assert result.leaderboard.columns == ("mine",) and result.generation is None
    assert all("response_format" in r for r in fake_server.requests)


def test_smoke_subset_is_the_shortest_item_per_task(bench_root: Path, tmp_path: Path) -> None:
    from howtobench.data.loader import load_items, load_release_writings
    from howtobench.run import SMOKE_RELEASE_MODELS, _release_writings, select_run_items

    smoke = RunSettings(name="s", run_dir=tmp_path / "r", selection=Selection(data_dir=bench_root),
                        execution=Execution(workspace=tmp_path / "w"))
    assert smoke.uses_local and smoke.smoke_subset and smoke.needs_local_judge
    items = load_items(bench_root)
    release = _release_writings(smoke, items)
    assert {w.model for w in release} == set(SMOKE_RELEASE_MODELS)
    picked = select_run_items(smoke, items, release)
    assert [it.task for it in picked] == ["completion", "guide", "open"]
    size = {it.id: len(it.information) + len(it.reference) for it in items}
    for it in picked:  # no item of its task has shorter texts
        assert all(size[it.id] <= size[o.id] + 600 for o in items if o.task == it.task)
    every = load_release_writings(bench_root, items=items)
    assert len({w.model for w in every}) == 10
    limited = smoke.model_copy(update={"selection": replace(smoke.selection, limit=2)})
    assert not limited.smoke_subset and len(select_run_items(limited, items, release)) == 6
    overlap = smoke.model_copy(update={"method": "rouge", "generate": False})
    assert not overlap.uses_local  # BLEU / ROUGE call no model: no local judge needed


@pytest.mark.parametrize("empty", ["exclude", "lowest"])
def test_run_passes_empty_to_its_leaderboard_report_and_config(tmp_path: Path, bench_root: Path, empty: str) -> None:
    """`run --empty` reaches the leaderboard files and report.html and is recorded in config.yaml, so
    `howtobench report RUN_DIR` keeps it (and --empty there overrides it). ROUGE-L calls no model: the empty
    writing is recorded with score 0 (status empty)."""
    import yaml
    from typer.testing import CliRunner

    from howtobench.cli.main import app

    rows = [json.loads(line) for line in (bench_root / "guide" / "aligned.jsonl").read_text("utf-8").splitlines()[:2]]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps({"infer_id": r["infer_id"], "model": "mine", "output": text}) + "\n"
                            for r, text in zip(rows, [rows[0]["reference"], ""], strict=True)), "utf-8")
    run_dir = tmp_path / "run"
    out = CliRunner().invoke(app, ["run", "--data", str(bench_root), "--method", "rouge", "--writings", str(mine),
                                   "--no-release", "--task", "guide", "--run-dir", str(run_dir), "--bootstrap", "20",
                                   "--workspace", str(tmp_path / "ws"), "--no-progress", "--empty", empty])
    assert out.exit_code == 0, out.output
    board = json.loads((run_dir / "leaderboard.json").read_text("utf-8"))
    [cell] = [c for c in board["cells"] if c["row"] == "all" and c["column"] == "mine"]
    # the first writing is its reference (ROUGE-L 1); the empty one scores 0 when counted
    assert (cell["mean"], cell["n"], cell["n_empty"]) == ((1.0, 1, 1) if empty == "exclude" else (0.5, 2, 1))
    assert board["empty"]["convention"] == empty and board["empty"]["writings"] == 1
    assert yaml.safe_load((run_dir / "config.yaml").read_text("utf-8"))["empty"] == empty
    label = "1 empty writings left out of the means" if empty == "exclude" else "1 empty writings scored at the"
    assert label in (run_dir / "report.html").read_text("utf-8") and label in out.output
    assert label in (run_dir / "leaderboard.md").read_text("utf-8")
    page = tmp_path / "again.html"
    assert CliRunner().invoke(app, ["report", str(run_dir), "-o", str(page)]).exit_code == 0
    assert label in page.read_text("utf-8")  # the run's convention, read from its config.yaml
    other = "lowest" if empty == "exclude" else "exclude"
    assert CliRunner().invoke(app, ["report", str(run_dir), "-o", str(page), "--empty", other]).exit_code == 0
    assert label not in page.read_text("utf-8")


def _uniform_weights(request: dict) -> Reply:
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") != "weights":
        return default_handler(request)
    groups = schema["schema"]["properties"]
    return Reply.json({**{g: {leaf: 1 / len(s["required"]) for leaf in s["required"]}
                          for g, s in groups.items() if s.get("type") == "object"}, "explanation": "even"})


@pytest.mark.parametrize("language", [None, "zh"])
async def test_run_records_the_judge_prompt_language(fake_server: FakeServer, tmp_path: Path, bench_root: Path,
                                                     language: str | None) -> None:
    """The manifest and config.yaml name the judge's prompt language (en unless asked), as each judgment does."""
    fake_server.handler = _uniform_weights
    expected = language or "en"
    settings = _settings(tmp_path, fake_server, bench_root, {"tasks": ("guide",), "models": ("deepseek-r1",)},
                         method="tow", generate=False, judge_options=judge_options(
                             prompt_language=prompt_language_for("tow", language)))
    await run_benchmark(settings)
    manifest = json.loads((settings.run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["prompt_language"], manifest["prompt_languages"]) == (expected, [expected])
    config = yaml.safe_load((settings.run_dir / "config.yaml").read_text(encoding="utf-8"))
    assert config["prompt_language"] == expected
    rows = [json.loads(x) for x in (settings.run_dir / "judgments" / "tow.jsonl").read_text("utf-8").splitlines()]
    assert rows and {r["prompt_language"] for r in rows} == {expected}


async def test_run_judges_against_a_model_reference(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    """`run --reference-from`: deepseek-r1's writings are the references, so only the other model is judged (its
    own writings against themselves are skipped), and the manifest and config.yaml name the source."""
    fake_server.handler = _uniform_weights
    settings = _settings(tmp_path, fake_server, bench_root, {"tasks": ("guide",)}, method="tow", generate=False,
                         reference_from="deepseek-r1")
    await run_benchmark(settings)
    rows = [json.loads(x) for x in (settings.run_dir / "judgments" / "tow.jsonl").read_text("utf-8").splitlines()]
    assert [r["model"] for r in rows] == ["gpt-4o-2024-11-20"]
    assert rows[0]["reference_source"] == "model:deepseek-r1"
    manifest = json.loads((settings.run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["reference_sources"] == ["model:deepseek-r1"]
    config = yaml.safe_load((settings.run_dir / "config.yaml").read_text(encoding="utf-8"))
    assert config["reference_from"] == "deepseek-r1"


async def test_run_length_anchor_judges_variants_and_the_report_uses_them(fake_server: FakeServer, tmp_path: Path,
                                                                       bench_root: Path) -> None:
    """`run --length-anchor 4`: pad and truncate variants of 4 writings drawn across tasks and models are judged into
    anchor/, their cost is a line of the estimate, the leaderboard's controlled values take the slope measured on
    them, the report of the run directory too, and a re-run pays nothing."""
    from howtobench.dry_run import plan_run

    fake_server.handler = default_handler
    settings = _settings(tmp_path, fake_server, bench_root, {"limit": 2}, length_anchor=4, release=True)
    estimates = await plan_run(settings)
    anchor_line = next(e for e in estimates if e.role.startswith("judge (length anchor"))
    assert anchor_line.role == "judge (length anchor: 8 variants)" and anchor_line.total.calls == 8
    result = await run_benchmark(settings)
    path = settings.run_dir / "anchor" / "test-llm.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8 and sorted({r["model"].split("+")[1] for r in rows}) == ["pad", "truncate"]
    assert len({(r["task"], r["model"].split("+")[0]) for r in rows}) == 4  # four strata, one writing each
    pads = {r["item_id"]: r["writing_chars"] for r in rows if r["model"].endswith("+pad")}
    cuts = {r["item_id"]: r["writing_chars"] for r in rows if r["model"].endswith("+truncate")}
    assert all(pads[i] > cuts[i] for i in pads)
    (fit, *_) = result.leaderboard.length_control.fits  # type: ignore[union-attr]
    assert fit.anchor is not None and fit.anchor.n == 8
    assert yaml.safe_load((settings.run_dir / "config.yaml").read_text("utf-8"))["length_anchor"] == 4
    page = (settings.run_dir / "report.html").read_text(encoding="utf-8")
    assert "measured on 8 pad/trim pairs" in page
    fake_server.reset()
    await run_benchmark(settings)
    assert fake_server.requests == []


async def test_run_length_slopes_per_model_reaches_the_leaderboard_config_and_report(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    """`run --length-slopes per-model` (implies --length-control): the run's tables use per-model slopes, config.yaml
    records the mode, leaderboard.json and report.html (made as `report RUN_DIR`) name it and show the slopes."""
    fake_server.handler = default_handler
    settings = _settings(tmp_path, fake_server, bench_root, {"limit": 6, "tasks": ("open",)},
                         length_slopes="per-model")
    result = await run_benchmark(settings)
    lc = result.leaderboard.length_control
    assert lc is not None and lc.slopes == "per-model"
    assert set(lc.fits[0].per_model) == set(result.leaderboard.columns)
    assert yaml.safe_load((settings.run_dir / "config.yaml").read_text("utf-8"))["length_slopes"] == "per-model"
    saved = json.loads((settings.run_dir / "leaderboard.json").read_text("utf-8"))["length_control"]
    assert saved["slopes"] == "per-model" and saved["fits"][0]["per_model"] is not None
    page = (settings.run_dir / "report.html").read_text(encoding="utf-8")
    assert "Length slopes: per-model" in page and "<h3>Per-model length slopes</h3>" in page
