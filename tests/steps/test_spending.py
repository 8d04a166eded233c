"""steps/spending.py: one answer to "does this command spend money", and every model-calling command asks it.

Before, seven commands each wrote their own expression, and they differed: calibrate's ignored whether the
method calls a model (a metric with --judge given was treated as paid, and its judge preflighted), and only
generate, judge and run knew that batch files send nothing (the others have no batch files to send).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import howtobench.cli
from howtobench.config import EndpointConfig
from howtobench.llm.client import CacheMode
from howtobench.steps.spending import spends_money

REMOTE = EndpointConfig(base_url="https://api.openai.com/v1", model="gpt-4o-2024-11-20")
FILES = object()  # stands for a command's batch files (--batch-files): only whether it is given matters

# Every command that spends money, by the module that decides it, and the roles it calls a model as.
MONEY_COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "judge": ("judge.py", ("judge",)),
    "generate": ("generate.py", ("writer",)),
    "run": ("run.py", ("writer", "judge")),
    "build classify / filter / make": ("build.py", ("writer",)),
    "perturb": ("perturb.py", ("writer",)),
    "robustness": ("robustness.py", ("writer", "judge")),
    "calibrate": ("calibrate_judge.py", ("judge",)),
}

# (settings, the endpoint each role is given, cache mode, batch files, spends?)
TYPICAL: list[tuple[str, EndpointConfig | None, CacheMode, object | None, bool]] = [
    ("the embedded local model", None, "on", None, False),
    ("a remote priced endpoint", REMOTE, "on", None, True),
    ("a remote endpoint without the cache", REMOTE, "off", None, True),
    ("a remote endpoint, every answer replayed from the cache", REMOTE, "replay", None, False),
    ("a remote endpoint's requests written to batch files", REMOTE, "on", FILES, False),
    ("the local model replayed", None, "replay", None, False),
]


@pytest.mark.parametrize("command", sorted(MONEY_COMMANDS))
@pytest.mark.parametrize(("case", "endpoint", "cache_mode", "files", "spends"), TYPICAL, ids=[t[0] for t in TYPICAL])
def test_the_answer_for_each_command_under_typical_settings(command: str, case: str, endpoint: EndpointConfig | None,
                                                            cache_mode: CacheMode, files: object | None,
                                                            spends: bool) -> None:
    roles = MONEY_COMMANDS[command][1]
    assert spends_money(dict.fromkeys(roles, endpoint), cache_mode=cache_mode, files=files) is spends, case


def test_a_step_that_calls_no_model_spends_nothing() -> None:
    """A metric judge, perturb's non-transfer kinds, a build step with nothing to ask: no roles, no spend."""
    assert spends_money({}, cache_mode="on") is False
    # one role on the local model, the other on a configured endpoint: the configured one is paid
    assert spends_money({"writer": None, "judge": REMOTE}, cache_mode="on") is True


def _calls_of(module: Path) -> set[str]:
    """The names of the functions `module` calls."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def test_every_command_that_shows_an_estimate_asks_spends_money() -> None:
    """A command that shows an estimate (`estimate_first`) is a money command, listed above, and takes its
    answer from `spends_money`, not from an expression of its own over the cache mode."""
    cli = Path(howtobench.cli.__file__).parent
    estimating = {path.name for path in cli.glob("*.py") if "estimate_first" in _calls_of(path)}
    assert estimating == {module for module, _ in MONEY_COMMANDS.values()}
    for module in estimating:
        assert "spends_money" in _calls_of(cli / module), module
        assert '!= "replay"' not in (cli / module).read_text(encoding="utf-8"), module
