"""Judge methods by name: the registry's modules, which methods call a model, and a judge built from its options.

(The judge job itself — selection, client, runner — lives in `howtobench.steps.judge`.)
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from howtobench.errors import JudgeError
from howtobench.judges.base import JUDGES, Judge
from howtobench.judges.prompts import DEFAULT_PROMPT_LANGUAGE, check_prompt_language
from howtobench.llm.types import LLMClient

JUDGE_MODULES: tuple[str, ...] = (
    "howtobench.judges.tree_of_writing",
    "howtobench.judges.overlap",
    "howtobench.judges.baselines",
)
NO_MODEL_METHODS: frozenset[str] = frozenset({"bleu", "rouge", "sacrebleu", "average"})


def import_judges() -> None:
    """Import the judge modules so their `register_judge` decorators fill the registry (missing ones are skipped)."""
    for module in JUDGE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def calls_a_model(method: str) -> bool:
    """True for a registered judge method that calls a model (False for overlap metrics and unknown names)."""
    import_judges()
    return method in JUDGES and method not in NO_MODEL_METHODS


def build_judge(method: str, client: LLMClient | None, options: dict[str, Any]) -> Judge:
    """A judge from the registry; an option the method does not take is a clear error, not ignored."""
    import_judges()
    if method not in JUDGES:
        raise JudgeError(f"unknown judge method {method!r}; known: {', '.join(sorted(JUDGES)) or 'none'}")
    try:
        return JUDGES[method](client=client, **options)
    except TypeError as exc:
        raise JudgeError(f"method {method!r} does not take the options {sorted(options)}: {exc}") from exc


def prompt_language_for(method: str, language: str | None) -> str | None:
    """The judge prompt language of a method that sends prompts (the default, English, when none is given); None
    for a method that sends none. A language given to such a method is an error, not silently dropped."""
    if not calls_a_model(method):
        if language is not None:
            raise JudgeError(f"--prompt-language applies to judges that prompt a model; {method!r} sends no prompt")
        return None
    return check_prompt_language(language if language is not None else DEFAULT_PROMPT_LANGUAGE)


def judge_options(*, with_reference: bool = True, renormalize: bool = False, samples: int = 1,
                  tree: Path | str | None = None, max_tokens: int | None = None,
                  tow_results: Path | None = None, prompt_language: str | None = None) -> dict[str, Any]:
    """Only the options the user changed from their defaults, so methods that do not take them are not bothered
    (`build_judge` rejects an option a method does not know); `prompt_language` (see `prompt_language_for`) is
    kept whenever given, so a run's record names it. Shared by `howtobench judge`, `run` and the inspect task."""
    options: dict[str, Any] = {} if prompt_language is None else {"prompt_language": prompt_language}
    if not with_reference:
        options["with_reference"] = False
    if renormalize:
        options["renormalize"] = True
    if samples > 1:
        options["samples"] = samples
    if tree is not None:
        options["tree"] = tree
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if tow_results is not None:
        options["tow_results"] = tow_results
    return options
