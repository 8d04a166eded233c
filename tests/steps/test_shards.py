"""--shard I/N and merge: the parts of a judge job merged equal the unsharded job row for row; merge refuses
parts of different jobs, a shard given twice or missing, and a part that is not finished."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError, DataError
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Execution, Selection
from howtobench.steps.shards import Shard, merge_outputs, sidecar_path
from judge_replies import server_handler

MODELS = ("deepseek-chat", "gpt-4o-2024-11-20")


def job(bench_root: Path, out: Path, ws: Path, base_url: str, shard: Shard | None = None, **kw: Any) -> JudgeJob:
    endpoint = EndpointConfig(model="judge-m", base_urls=(base_url,))
    return JudgeJob(Selection(data_dir=bench_root, tasks=("guide",), limit=3, models=MODELS),
                    Execution(workspace=ws, progress=False), out, endpoint=endpoint, shard=shard, **kw)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_shard_split_is_by_item_round_robin() -> None:
    assert Shard(1, 2).items(["a", "a", "b", "c", "c", "d", "e"]) == {"a", "c", "e"}
    assert Shard(2, 2).pick([("a", 1), ("a", 2), ("b", 3)], lambda r: r[0]) == [("b", 3)]
    assert Shard.parse("3/4") == Shard(3, 4)
    for bad in ("0/2", "3/2", "1-2", "x/2"):
        with pytest.raises(ConfigError, match="--shard"):
            Shard.parse(bad)


async def test_merged_shards_equal_the_unsharded_job(bench_root: Path, tmp_path: Path) -> None:
    with FakeServer(server_handler()) as server:
        whole = await judge_job(job(bench_root, tmp_path / "whole.jsonl", tmp_path / "ws", server.base_url))
        parts = [tmp_path / f"part{i}.jsonl" for i in (1, 2)]
        for i, part in enumerate(parts, 1):
            judged = await judge_job(job(bench_root, part, tmp_path / f"ws{i}", server.base_url, Shard(i, 2)))
            assert {j.item_id for j in judged} <= {j.item_id for j in whole}
    assert [len(rows(p)) for p in parts] == [4, 2]  # items 1 and 3 in part 1, item 2 in part 2; two writings each
    kind, count = merge_outputs(parts[::-1], tmp_path / "merged.jsonl")
    assert (kind, count) == ("judgments", 6)
    by_key = {(r["item_id"], r["model"]): r for r in rows(tmp_path / "whole.jsonl")}
    expected = [by_key[(j.item_id, j.model)] for j in whole]  # the unsharded job's rows, in its selection order
    assert rows(tmp_path / "merged.jsonl") == expected

    with pytest.raises(DataError, match=r"shard\(s\) 2 of 2 missing"):
        merge_outputs(parts[:1], tmp_path / "m.jsonl")
    with pytest.raises(DataError, match="shard 1/2 is given twice"):
        merge_outputs([parts[0], parts[0], parts[1]], tmp_path / "m.jsonl")
    with pytest.raises(DataError, match="whole.jsonl is no shard output"):
        merge_outputs([tmp_path / "whole.jsonl"], tmp_path / "m.jsonl")

    side = json.loads(sidecar_path(parts[1]).read_text())
    sidecar_path(parts[1]).write_text(json.dumps({**side, "job": {**side["job"], "judge_model": "other"}}))
    with pytest.raises(DataError, match=r"part2.jsonl is a part of another job than .*part1.jsonl \(judge_model"):
        merge_outputs(parts, tmp_path / "m.jsonl")
    sidecar_path(parts[1]).write_text(json.dumps(side))
    parts[1].write_text(parts[1].read_text().splitlines()[0] + "\n")  # a part killed before its end
    with pytest.raises(DataError, match=r"part2.jsonl lacks 1 of its 2 rows .*run its command again"):
        merge_outputs(parts, tmp_path / "m.jsonl")


def test_generate_shards_merged_by_the_command(bench_root: Path, tmp_path: Path) -> None:
    def generate(*extra: str) -> None:
        result = CliRunner().invoke(app, ["generate", "--data", str(bench_root), "--base-url", server.base_url,
                                          "--model", "w", "--task", "open", "--limit", "3", "--no-progress", *extra])
        assert result.exit_code == 0, result.output

    with FakeServer(server_handler()) as server:
        generate("-o", str(tmp_path / "whole.jsonl"), "--workspace", str(tmp_path / "ws"))
        for i in (1, 2, 3):
            generate("-o", str(tmp_path / f"w{i}.jsonl"), "--workspace", str(tmp_path / f"ws{i}"), "--shard", f"{i}/3")
    merged = CliRunner().invoke(app, ["merge", *(str(tmp_path / f"w{i}.jsonl") for i in (3, 1, 2)),
                                      "-o", str(tmp_path / "merged.jsonl")])
    assert merged.exit_code == 0, merged.output
    assert "merged 3 parts: 3 writings" in merged.output
    selection = json.loads(sidecar_path(tmp_path / "w1.jsonl").read_text())["selection"]
    whole = {r["infer_id"]: r for r in rows(tmp_path / "whole.jsonl")}
    assert rows(tmp_path / "merged.jsonl") == [whole[item] for item in selection]  # row for row, in item order


async def test_one_data_set_at_two_paths_is_one_job_and_other_data_is_not(bench_root: Path, tmp_path: Path) -> None:
    """Shards identify the data by its content digest, not its path (issue 34, item 7): parts judged from the
    release and from a link to it merge; a part judged from a changed copy is another job, named as "data"."""
    link = tmp_path / "same-data"
    link.symlink_to(bench_root, target_is_directory=True)
    changed = tmp_path / "changed-data"
    shutil.copytree(bench_root / "guide", changed / "guide")
    aligned = changed / "guide" / "aligned.jsonl"
    lines = aligned.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["reference"] = first.get("reference", "") + "。"
    aligned.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    parts = [tmp_path / f"part{i}.jsonl" for i in (1, 2)]
    with FakeServer(server_handler()) as server:
        await judge_job(job(bench_root, parts[0], tmp_path / "ws1", server.base_url, Shard(1, 2)))
        await judge_job(job(link, parts[1], tmp_path / "ws2", server.base_url, Shard(2, 2)))
        assert merge_outputs(parts, tmp_path / "merged.jsonl") == ("judgments", 6)
        other = tmp_path / "other2.jsonl"
        await judge_job(job(changed, other, tmp_path / "ws3", server.base_url, Shard(2, 2)))
    with pytest.raises(DataError, match=r"other2.jsonl is a part of another job than .*part1.jsonl \(data differ\)"):
        merge_outputs([parts[0], other], tmp_path / "m.jsonl")
