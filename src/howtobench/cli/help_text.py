"""What `--help` of the long commands shows besides the options: placeholders that say what to type (`URL`, `NAME`,
`[tow|single|...]` rather than click's `<str>` / `<int range>`), the order of the flags inside a group (the ones a
newcomer types first on top), the endpoint knobs moved to a later group, and an Examples section as `gh` has.

Pure presentation: nothing here changes what a flag accepts (the flags' own callbacks check their values).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

TUNING = "Endpoint tuning (both endpoints)"
"""The long tail of the endpoint flags: connections, retries, JSON mode. Moved out of the writer and judge groups so
that those show --base-url, --model and the judge's flags on the first screen."""

_KNOBS = ("concurrency", "rpm", "timeout", "max-retries", "reasks", "response-format", "use-max-completion-tokens",
          "json-object-schema")
TUNED: frozenset[str] = frozenset({f"--{k}" for k in _KNOBS} | {f"--judge-{k}" for k in _KNOBS} | {"--parallel"})

SAMPLING = "The writing's sampling"
SAMPLED: frozenset[str] = frozenset({"--temperature", "--max-tokens", "--system-prompt", "--top-p"})
"""The writer's sampling flags, in a group of their own after the selection (the writer group is its endpoint)."""

MOVED: dict[str, str] = {"--method": "The judge", "--panel": "The judge", "--writings": "What to judge",
                         "--release": "What to judge"}
"""Flags drawn in another group than their own panel: with the flags a user gives beside them."""

FIRST: tuple[str, ...] = (
    "--base-url", "--model", "--api-key-env", "--provider",
    "--judge-base-url", "--judge-model", "--judge-api-key-env", "--judge-provider", "--method", "--local-judge",
    "--panel", "--data", "--writings", "--release", "--task", "--subset", "--limit",
)
"""Inside its group, a flag listed here comes first, in this order; the others keep their order after it."""


def _methods() -> Sequence[str]:
    from howtobench.judges.base import METHODS

    return sorted(METHODS)


def _formats() -> Sequence[str]:
    from howtobench.config import RESPONSE_FORMATS

    return RESPONSE_FORMATS


def _tasks() -> Sequence[str]:
    from howtobench.data.models import TASKS

    return TASKS


def _prompt_styles() -> Sequence[str]:
    from howtobench.generate import PROMPT_STYLES

    return PROMPT_STYLES


CHOICES: dict[str, Callable[[], Sequence[str]]] = {
    "--method": _methods,
    "--response-format": _formats, "--judge-response-format": _formats, "--task": _tasks,
    "--prompt-style": _prompt_styles,
}
"""Flags that take one of a few names: their placeholder lists them (`--method [tow|bleu|...]`). The providers are
listed in their flag's help instead: a placeholder that long would push the judge's flags off the first screen."""

NAMES: dict[str, str] = {
    "--base-url": "URL", "--judge-base-url": "URL", "--model": "NAME", "--judge-model": "NAME",
    "--api-key-env": "VAR", "--judge-api-key-env": "VAR", "--data": "DIR", "--run-dir": "DIR", "--workspace": "DIR",
    "--out": "FILE", "--config": "FILE", "--prices": "FILE", "--panel": "FILE", "--writings": "FILE",
    "--batch-export": "FILE", "--batch-import": "FILE", "--from": "FILE", "--tree": "TREE", "--name": "NAME",
    "--genre": "GENRE,...", "--ids": "ID,...", "--models": "MODEL,...", "--max-cost": "USD",
    "--confirm-above": "USD", "--timeout": "SECONDS", "--judge-timeout": "SECONDS", "--batch-poll": "SECONDS",
    "--deadline": "SECONDS", "--reference-from": "MODEL|FILE", "--shard": "I/N", "--host": "ADDRESS",
    "--port": "PORT", "--provider": "NAME", "--judge-provider": "NAME", "--failed-reward": "group-mean|NUMBER",
    "--prompt-language": "en|zh",
}
"""Placeholders named by what goes there."""

_GENERIC = {"int": "N", "int range": "N", "float": "NUMBER", "float range": "NUMBER", "path": "PATH",
            "list[Path]": "FILE", "list[str]": "TEXT", "str": "TEXT"}
_TYPER_METAVAR = re.compile(r"<([^<>]+)>$")


def placeholder(flags: Sequence[str], shown: str) -> str:
    """The option column of a help record with click's `<type>` placeholder replaced by what to type."""
    found = _TYPER_METAVAR.search(shown)
    if found is None:
        return shown
    long = next((f for f in flags if f.startswith("--")), "")
    if long in CHOICES:
        name = "[" + "|".join(CHOICES[long]()) + "]"
    elif "|" in found.group(1):  # typer's own list of a Literal's values
        name = f"[{found.group(1)}]"
    else:
        name = NAMES.get(long) or _GENERIC.get(found.group(1), found.group(1).upper())
    return shown[:found.start()] + name


def wrapped(command: str, width: int, indent: int) -> list[str]:
    """A shell command over several lines ending in ` \\`, each within `width` columns after `indent` spaces."""
    lines: list[str] = []
    current = ""
    units: list[str] = []
    for word in command.split(" "):  # a flag and its value stay on one line
        if units and units[-1].startswith("-") and " " not in units[-1] and not word.startswith("-"):
            units[-1] += " " + word
        else:
            units.append(word)
    for word in units:
        room = width - indent - (4 if lines else 0) - 2
        if current and len(current) + 1 + len(word) > room:
            lines.append(current + " \\")
            current = word
        else:
            current = f"{current} {word}" if current else word
    return [*lines, current] if not lines else [lines[0], *("    " + line for line in lines[1:]), "    " + current]


def first_order(flags: Sequence[str]) -> int:
    """Sort key inside a group: FIRST's flags by their place there, the rest after them (a stable sort keeps
    their order)."""
    long = next((f for f in flags if f.startswith("--")), "")
    return FIRST.index(long) if long in FIRST else len(FIRST)


_RUN_JUDGE = "--judge-provider openai --judge-model gpt-4o-2024-11-20"
EXAMPLES: dict[str, tuple[str, ...]] = {
    "run": (
        "# your model (an OpenAI-compatible server) judged by GPT-4o, beside the",
        "# paper's Table 4; the estimate (calls, dollars, time) comes first",
        f"howtobench run --base-url http://localhost:8000/v1 --model my-model {_RUN_JUDGE}",
        "# ranked among the paper's ten models, re-judged by the same judge (10x)",
        f"howtobench run --base-url http://localhost:8000/v1 --model my-model {_RUN_JUDGE} --release",
        "# the estimate only; a small stratified sample",
        f"howtobench run --provider deepseek --model deepseek-chat {_RUN_JUDGE} --subset 24 --dry-run",
        "# writings you already have (JSONL: infer_id, model, output)",
        f"howtobench run --writings mine.jsonl {_RUN_JUDGE}",
        "# no endpoint at all: the embedded model writes and judges (a smoke test)",
        "howtobench run",
    ),
    "judge": (
        "# the paper's shipped writings of two models, judged by your judge",
        "howtobench judge --models deepseek-r1,gpt-4o-2024-11-20 --judge-provider vllm --judge-model Qwen2.5-72B "
        "-o tow.jsonl",
        "# your own writings, a baseline judge, an estimate first",
        "howtobench judge --writings mine.jsonl --method single --judge-provider openai --judge-model gpt-4o "
        "--dry-run",
        "# then the table",
        "howtobench leaderboard tow.jsonl",
    ),
    "generate": (
        "# your model writes every item (the file `judge --writings` reads)",
        "howtobench generate --base-url http://localhost:8000/v1 --model my-model -o mine.jsonl",
        "# a hosted model, 24 items stratified by task x genre",
        "howtobench generate --provider deepseek --model deepseek-chat --subset 24 -o ds.jsonl",
    ),
    "serve": (
        "# rewards for an RL trainer from a local vLLM judge, on a free port",
        "howtobench serve --judge-provider vllm --judge-model Qwen2.5-72B-Instruct --port 0",
        "# one sample by hand",
        "curl -s localhost:8000/get_reward -d '{\"query\": [\"...\"], \"labels\": [\"open/123\"]}'",
    ),
}
"""Each command's Examples section: a comment line (#) says what the next command does."""
