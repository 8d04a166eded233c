"""The first hour's smaller findings (issue 40, 6), each through the real entry point: `leaderboard RUN_DIR`, `ToW`
as a method name, `perturb --kind trunc` with a did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_invoke import Invoke
from howtobench.judges.base import Judgment


def _judgment(model: str, item: str, score: float) -> Judgment:
    return Judgment(method="rouge", task="guide", item_id=item, genre="prose", model=model, score=score, status="ok")


def test_leaderboard_reads_a_run_directory(invoke: Invoke, tmp_path: Path) -> None:
    """`report RUN_DIR` worked and `leaderboard RUN_DIR` said "is a directory"."""
    (tmp_path / "run" / "judgments").mkdir(parents=True)
    rows = [_judgment(m, i, s + k / 10) for m, s in (("a", 0.3), ("b", 0.2)) for k, i in enumerate(("i1", "i2"))]
    (tmp_path / "run" / "judgments" / "rouge.jsonl").write_text("".join(j.model_dump_json() + "\n" for j in rows),
                                                                   encoding="utf-8")
    code, out = invoke(["leaderboard", str(tmp_path / "run"), "--bootstrap", "10", "--no-progress"])
    assert code == 0, out
    assert "\na: All 0.3500 [" in out and "\nb: All 0.2500 [" in out  # its closing lines
    code, out = invoke(["leaderboard", str(tmp_path / "nothing"), "--no-progress"])
    assert code == 2 and "no such results file or run directory" in out


def test_the_paper_spelling_of_a_method_is_accepted(invoke: Invoke, tmp_path: Path, bench_root: Path) -> None:
    base = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--models", "deepseek-r1",
            "-o", str(tmp_path / "j.jsonl"), "--workspace", str(tmp_path / "ws"), "--no-progress", "--dry-run"]
    code, out = invoke([*base, "--method", "ROUGE"])
    assert code == 0, out
    code, out = invoke([*base, "--method", "tows"])
    assert code == 2 and "unknown judge method 'tows' (did you mean 'tow'?)" in out


def test_a_misspelt_perturbation_kind_gets_a_suggestion(invoke: Invoke, tmp_path: Path, bench_root: Path) -> None:
    source = bench_root / "guide" / "inferences" / "deepseek-r1.jsonl"
    code, out = invoke(["perturb", str(source), "--kind", "trunc", "-o", str(tmp_path / "p.jsonl")])
    assert code == 2 and "unknown perturbation kind 'trunc' (did you mean 'truncate'?); known: drop," in out
    assert not (tmp_path / "p.jsonl").exists()


def test_score_names_what_to_use_for_another_method(tmp_path: Path) -> None:
    """`howtobench.score(..., method="rubric")` was a bare TypeError from TreeOfWriting; nothing is called."""
    import howtobench
    from howtobench.errors import ConfigError

    dead = howtobench.EndpointConfig(model="m", base_url="http://127.0.0.1:9/v1")  # a call would be Unreachable
    with pytest.raises(ConfigError, match=r"Tree-of-Writing only, not method='rubric': .*howtobench judge --method "
                                          r"rubric --writings FILE"):
        howtobench.score("写一封信", "亲爱的……", judge=dead, method="rubric", workspace=tmp_path)
    with pytest.raises(ConfigError, match=r"unknown option 'samplez' \(did you mean 'samples'\?\)"):
        howtobench.score("写一封信", "亲爱的……", judge=dead, samplez=2, workspace=tmp_path)


async def test_a_port_in_use_suggests_port_zero() -> None:
    import socket

    from aiohttp import web

    from howtobench.errors import OutputError
    from howtobench.listen import listening

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OutputError, match=rf"cannot listen on 127.0.0.1:{port}: .*; `--port 0` takes a free one"):
            async with listening(web.Application(), "127.0.0.1", port):
                pass


def test_a_writings_file_given_to_leaderboard_names_the_field_and_the_fix(invoke: Invoke, tmp_path: Path,
                                                                         bench_root: Path) -> None:
    writings = tmp_path / "mine.jsonl"
    lines = (bench_root / "guide" / "inferences" / "deepseek-r1.jsonl").read_text(encoding="utf-8").splitlines()
    writings.write_text(lines[0] + "\n", encoding="utf-8")
    code, out = invoke(["leaderboard", str(writings), "--no-progress"])
    assert code == 2, out
    assert f"{writings}:1: not a judgment: method: Field required (this looks like a writings file" in out
    assert "howtobench judge --writings FILE" in out


def test_the_batch_export_hint_says_where_the_ray_script_is(tmp_path: Path) -> None:
    """A pip user has no examples/ folder: the hint says the script is in the source repository."""
    from howtobench.steps.batch_files import round_text

    text = round_text(tmp_path / "calls.jsonl", 1, 10, "m", None)
    ray = next(line for line in text.splitlines() if "Ray Data" in line)
    assert "examples/ray_data_judge.py of the howtobench source repository (not in the pip package" in ray
    assert not ray.strip().startswith("python examples/")


def test_verl_no_reward_advice_fits_the_server_it_came_from() -> None:
    """verl's NoReward for a bad label advised --failed-reward group-mean to a server already run with it."""
    from howtobench.rl.verl import NoReward, verl_reward

    already = {"reward": None, "error": "unknown item 'open/999'; group-mean: no sample of its group was judged"}
    with pytest.raises(NoReward) as seen:
        verl_reward(already, [])
    assert "group-mean is already on" in str(seen.value) and "fix the label" in str(seen.value)
    assert "leave --failed-reward" not in str(seen.value)
    with pytest.raises(NoReward, match=r"leave --failed-reward \(or failed_reward in reward_kwargs\) at group-mean"):
        verl_reward({"reward": None, "error": "leaf logic failed"}, [])


def test_the_report_says_yes_and_no() -> None:
    """Raw True / False showed in the report's provenance."""
    from howtobench.report.html_manifest import manifest_view

    view = manifest_view({"name": "r", "smoke": False, "judge": {"model": "m", "use_max_completion_tokens": True}})
    assert ("smoke", "no") in view.overview
    assert ("use_max_completion_tokens", "yes") in dict(view.endpoints)["judge"]
    assert "True" not in repr(view) and "False" not in repr(view.overview)
