"""The judge options a user changed, as `build_judge` takes them.

(The registry — which methods exist, what each is, a judge built from its options — is `howtobench.judges.base`;
the judge job itself — selection, client, runner — lives in `howtobench.steps.judge`.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from howtobench.errors import JudgeError
from howtobench.judges.base import calls_a_model, method_info
from howtobench.judges.prompts import DEFAULT_PROMPT_LANGUAGE, check_prompt_language


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


def parse_judge_options(pairs: Iterable[str] | str | None) -> dict[str, str]:
    """`--judge-option KEY=VALUE` texts (repeatable; one text or a list from an adapter or the inspect task) as a
    dict; a text without `=` or a key given twice is an error naming it."""
    given: dict[str, str] = {}
    for pair in [pairs] if isinstance(pairs, str) else pairs or ():
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise JudgeError(f"--judge-option {pair!r}: give KEY=VALUE (e.g. samples=3)")
        if key.strip() in given:
            raise JudgeError(f"--judge-option {key.strip()} is given twice")
        given[key.strip()] = value
    return given


def with_judge_options(method: str, options: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The options of the command's own flags plus the `--judge-option`s, each name and value checked and
    converted by the method (`Method.convert_options`); an option set both ways is an error, not a silent
    choice of one. A judge method's new option is then its module's change alone: its signature declares it."""
    if not given:
        return dict(options)
    converted = method_info(method).convert_options(given)
    if both := sorted(set(converted) & set(options)):
        raise JudgeError(f"--judge-option {both[0]} is also set by the command's own flag for it: give it once")
    return {**options, **converted}
