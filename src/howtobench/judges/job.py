"""The judge options a user changed, as `build_judge` takes them.

(The registry — which methods exist, what each is, a judge built from its options — is `howtobench.judges.base`;
the judge job itself — selection, client, runner — lives in `howtobench.steps.judge`.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from howtobench.errors import JudgeError
from howtobench.judges.base import calls_a_model
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
