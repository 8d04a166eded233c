"""One registry mechanism with entry-point groups (issue 36 point 2): a package installed from outside
(tests/plugin_site/howtobench_plugin_demo, "installed" by a dist-info written to a temporary site folder, as pip
would leave it) adds a judge method, a leaf kind, an output format and a perturbation rule, and the commands use
each as they use the toolkit's own. Its judge's one option reaches it through `--judge-option` with nothing but
its own module declaring it, and every judgment records the options its judge was built with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fake_server import FakeServer
from howtobench.errors import ConfigError, JudgeError
from howtobench.judges.tree import TREES_DIR
from howtobench.registry import GROUPS, Registry
from judge_replies import server_handler

PLUGIN_SITE = Path(__file__).with_name("plugin_site")
ENTRY_POINTS = {
    "howtobench.judges": "sentences = howtobench_plugin_demo.judge",
    "howtobench.leaf_kinds": "count-paragraphs = howtobench_plugin_demo.leaf",
    "howtobench.formats": "tsv = howtobench_plugin_demo.fmt",
    "howtobench.perturbations": "reverse-paragraphs = howtobench_plugin_demo.rule",
}
TREE = TREES_DIR / "default.yaml"


def install(root: Path) -> dict[str, str]:
    """The demo package's dist-info (its entry points) in a site folder of its own, both on the path."""
    info = root / "howtobench_plugin_demo-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: howtobench-plugin-demo\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("".join(f"[{group}]\n{entry}\n\n" for group, entry in ENTRY_POINTS.items()),
                                           encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(PLUGIN_SITE), *sys.path])}


def howtobench(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from howtobench.cli.main import main; sys.argv = ['howtobench', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_every_group_has_its_entry_point_name() -> None:
    assert set(GROUPS.values()) == set(ENTRY_POINTS)


def test_a_plugin_judge_format_and_option_work_from_the_command_line(tmp_path: Path, bench_root: Path) -> None:
    env = install(tmp_path / "site")
    listed = howtobench(env, tmp_path, "list", "methods", "--format", "tsv")
    assert listed.returncode == 0, listed.stderr
    assert "sentences\tno\tsentence ends, capped (a plugin)" in listed.stdout.splitlines()  # the plugin's format

    out = tmp_path / "sentences.jsonl"
    judge = ["judge", "--method", "sentences", "--data", str(bench_root), "--task", "guide", "--limit", "3",
             "--models", "deepseek-chat", "-o", str(out), "--no-progress"]
    judged = howtobench(env, tmp_path, *judge, "--judge-option", "cap=2")
    assert judged.returncode == 0, judged.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and all(r["method"] == "sentences" and 0 <= r["score"] <= 2 for r in rows)
    assert all(r["judge_options"] == {"cap": 2} for r in rows)  # converted to the int the signature annotates

    wrong = howtobench(env, tmp_path, *judge, "--judge-option", "cap=many")
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: --judge-option cap=many: Input should be a ")
    unknown = howtobench(env, tmp_path, *judge, "--judge-option", "depth=2")
    assert unknown.returncode == 2
    assert "method 'sentences' does not take the options ['depth'] (it takes: cap)" in unknown.stderr


def test_a_plugin_rule_perturbs_and_a_plugin_leaf_kind_scores(tmp_path: Path, bench_root: Path) -> None:
    env = install(tmp_path / "site")
    writings = tmp_path / "w.jsonl"
    writings.write_text(json.dumps({"infer_id": "infer_354", "model": "mine", "output": "甲。\n\n乙。\n\n丙。"},
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    perturbed = howtobench(env, tmp_path, "perturb", str(writings), "--kind", "reverse-paragraphs", "-o",
                           str(tmp_path / "p.jsonl"), "--data", str(bench_root), "--no-progress")
    assert perturbed.returncode == 0, perturbed.stderr
    [row] = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["output"] == "丙。\n\n乙。\n\n甲。" and row["model"] == "mine+reverse-paragraphs"

    spec = yaml.safe_load(TREE.read_text(encoding="utf-8"))
    node = next(n for n in spec["nodes"] if n["id"] == "format")
    node["leaves"].append({"id": "paras", "label": {"zh": "段落数", "en": "Paragraph count"},
                           "kind": "count-paragraphs", "scale": list(range(1, 11)),
                           "criteria": {"zh": "段落数。", "en": "How many paragraphs."}})
    tree = tmp_path / "tree.yaml"
    tree.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "tow.jsonl"
    with FakeServer(server_handler()) as server:
        judged = howtobench(env, tmp_path, "judge", "--tree", str(tree), "--data", str(bench_root), "--task", "guide",
                            "--limit", "1", "--models", "deepseek-chat", "--judge-base-url", server.base_url,
                            "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "-o", str(out),
                            "--no-progress", "--no-preflight")
        prompts = [json.dumps(r["messages"], ensure_ascii=False) for r in server.requests]
    assert judged.returncode == 0, judged.stderr
    [judgment] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    paras = next(leaf for leaf in judgment["leaves"] if leaf["name"] == "paras")
    assert paras["status"] == "ok" and paras["reason"].endswith("paragraphs (a plugin)") and paras["score"] >= 1
    assert not any("How many paragraphs." in p for p in prompts[1:])  # scored by its code: no leaf call for it
    assert judgment["judge_options"]["tree"] == str(tree)


def test_a_name_is_registered_once_and_an_unknown_one_is_answered_with_the_known(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    things: Registry[int] = Registry("perturbation rule", error=ConfigError)
    things.register("drop", 1, origin="mod_a")
    things.register("drop", 2, origin="mod_a")  # the same module again (a re-import): replaced
    with pytest.raises(ConfigError, match="perturbation rule 'drop' is registered twice: by mod_a and by mod_b"):
        things.register("drop", 3, origin="mod_b")
    things.register("repeat", 4, origin="mod_b")
    assert (things["drop"], things.names(), things.origin("repeat")) == (2, ("drop", "repeat"), "mod_b")
    with pytest.raises(ConfigError, match=r"unknown perturbation rule 'dorp' \(did you mean 'drop'\?\); known: drop, "
                                          "repeat"):
        things.lookup("dorp")
    assert things.pop("drop") == 2 and "drop" not in things


def test_a_plugin_that_fails_to_load_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        name, value = "bad", "nowhere.module"

        def load(self) -> None:
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [Broken()])
    methods: Registry[int] = Registry("judge method", error=JudgeError)
    with pytest.raises(JudgeError, match=r"^the judge method plugin 'bad' \(nowhere.module\) failed to load: "
                                         "ImportError: No module named 'nowhere'$"):
        methods.names()
