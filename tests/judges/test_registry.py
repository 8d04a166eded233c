"""The judge registry knows its members (issue 25 point 2): what a method is comes from its registration, an
installed package adds one through the `howtobench.judges` entry points, and options are checked against the
method's signature so a bug inside a constructor is a bug, not the user's mistake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from howtobench.errors import JudgeError
from howtobench.judges.base import METHODS, build_judge, calls_a_model, import_judges, method_info, register_judge

PLUGIN = '''
"""A tiny judge package: scores a writing by its length in characters, calls no model."""
from howtobench.judges.base import Judgment, register_judge


class LengthJudge:
    method = "charcount"

    def __init__(self, *, per: int = 1) -> None:
        self.per = per

    async def judge(self, item, writing):
        return Judgment(method=self.method, item_id=item.id, model=writing.model, task=item.task,
                        genre=item.genre, score=float(len(writing.output) // self.per))


@register_judge("charcount", takes=LengthJudge, calls_model=False, scorer=True,
                description="characters in the writing (a plugin)")
def make(*, client=None, **options):
    return LengthJudge(**options)
'''


def install_plugin(root: Path) -> dict[str, str]:
    """The package as pip would leave it: its module and a dist-info naming its entry point, on a path of its own."""
    site = root / "site"
    (site / "charcount_judge.py").parent.mkdir(parents=True)
    (site / "charcount_judge.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "charcount_judge-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: charcount-judge\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[howtobench.judges]\ncharcount = charcount_judge\n", encoding="utf-8")
    path = os.pathsep.join([str(site), *sys.path])
    return {**os.environ, "PYTHONPATH": path}


def howtobench(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from howtobench.cli.main import main; sys.argv = ['howtobench', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_an_installed_package_adds_a_method_every_command_sees(tmp_path: Path, bench_root: Path) -> None:
    env = install_plugin(tmp_path)
    listed = howtobench(env, tmp_path, "list", "methods", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["method"]: row for row in json.loads(listed.stdout)["rows"]}
    assert rows["charcount"] == {"method": "charcount", "calls a model": "no",
                                 "what it is": "characters in the writing (a plugin)"}

    out = tmp_path / "chars.jsonl"
    judged = howtobench(env, tmp_path, "judge", "--method", "charcount", "--data", str(bench_root), "--task", "guide",
                        "--limit", "2", "--models", "deepseek-chat", "-o", str(out), "--no-progress")
    assert judged.returncode == 0, judged.stderr
    rows_out = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["method"] for r in rows_out] == ["charcount", "charcount"]
    assert all(r["score"] == float(r["score"]) and r["score"] > 0 for r in rows_out)

    run_dir = tmp_path / "runs" / "chars"
    ran = howtobench(env, tmp_path, "run", "--method", "charcount", "--data", str(bench_root), "--no-generate",
                     "--task", "guide", "--limit", "1", "--models", "deepseek-chat", "--run-dir", str(run_dir),
                     "--workspace", str(tmp_path / "ws"), "--no-progress")
    assert ran.returncode == 0, ran.stderr
    assert (run_dir / "judgments" / "charcount.jsonl").is_file()
    board = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["columns"] == ["deepseek-chat"]

    inspect = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            from inspect_ai._util.registry import registry_lookup
            import howtobench.inspect_eval._registry as registered
            # inspect names a scorer with its package's prefix when it can tell the package, plainly otherwise: the
            # plugin's scorer must be found the way the toolkit's own tow is
            found = [any(registry_lookup("scorer", n) is not None for n in (f"howtobench/{m}", m))
                     for m in ("tow", "charcount")]
            print("charcount" in registered.__all__, found == [True, True])
            """)], env=env, capture_output=True, text=True, timeout=300)
    assert inspect.stdout.split() == ["True", "True"], inspect.stderr

    typo = howtobench(env, tmp_path, "judge", "--method", "charcout", "--data", str(bench_root), "-o", str(out))
    assert typo.returncode == 2 and "did you mean 'charcount'" in typo.stderr + typo.stdout


def test_what_a_method_is_comes_from_its_registration() -> None:
    import_judges()
    assert {name for name, m in METHODS.items() if not m.calls_model} >= {"bleu", "rouge", "sacrebleu", "average"}
    assert [name for name, m in METHODS.items() if m.paper_scale] == ["tow"]
    assert {name for name, m in METHODS.items() if m.scorer} >= {"tow", "rubric", "single", "autoplan"}
    assert method_info("average").rejudges == "tow" and not calls_a_model("average") and calls_a_model("tow")
    assert method_info("tow").smoke_options["max_tokens"] == 96
    assert {"tree", "with_reference", "renormalize", "samples"} <= (method_info("tow").options or set())
    assert {"samples", "max_tokens", "rubrics_dir"} <= (method_info("rubric").options or set())  # through **options
    assert method_info("bleu").options == frozenset()
    assert (method_info("bleu").score_max, method_info("rouge").score_max, method_info("tow").score_max) == (100, 1, 10)
    with pytest.raises(JudgeError, match="unknown judge method 'towe' \\(did you mean 'tow'"):
        method_info("towe")


def test_an_unknown_option_is_the_users_mistake_and_a_constructor_bug_is_a_bug() -> None:
    class Broken:
        method = "broken"

        def __init__(self, *, depth: int = 1) -> None:
            self.depth = len(depth)  # type: ignore[arg-type]  # the bug: TypeError inside the constructor

    register_judge("broken-test", takes=Broken, description="a judge with a bug")(
        lambda client=None, **options: Broken(**options))
    try:
        with pytest.raises(JudgeError, match=r"does not take the options \['width'\] \(it takes: depth\)"):
            build_judge("broken-test", None, {"width": 2})
        with pytest.raises(TypeError, match="has no len"):  # not turned into "does not take the options"
            build_judge("broken-test", None, {"depth": 2})
        with pytest.raises(JudgeError, match="does not take the options \\['samples'\\]"):
            build_judge("bleu", None, {"samples": 2})
    finally:
        METHODS.pop("broken-test")


def test_a_name_taken_by_another_module_is_refused() -> None:
    import_judges()

    def make(**options: Any) -> Any:
        raise AssertionError("never built")

    with pytest.raises(JudgeError, match="'tow' is registered twice: by howtobench.judges.tree_of_writing and by"):
        register_judge("tow")(make)
    assert METHODS["tow"].factory.__module__ == "howtobench.judges.tree_of_writing"
