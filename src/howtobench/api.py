"""Score one writing from Python: `howtobench.score(...)` (sync) and `howtobench.ascore(...)` (async).

For writing apps and RL reward loops: one call judges a text with a ToW tree, with or without a
reference. The judge is an `EndpointConfig` (any OpenAI-compatible server), an already open
`LLMClient` (reuse it across many calls: its cache and connection pool are shared), the shorthand
`base_url="..."` + `model="..."` (+ `api_key_env="NAME"`; `provider="deepseek"` + `model=` takes a named server's
defaults, llm.wire.PROVIDERS), or nothing for the embedded local model.
Paths (`workspace`, `tree`) may be given as `str` or `Path`. To score many writings of one instruction, build one
`howtobench.judges.tree_of_writing.TreeOfWriting` and call its `judge` repeatedly: the edge weights
are then negotiated once for all of them.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from howtobench.config import EndpointConfig, resolve_workspace
from howtobench.data.models import TASKS, Item, Language, Task, Writing
from howtobench.errors import ConfigError
from howtobench.event_loop import run_anywhere
from howtobench.guard.guard import GuardSettings, guard_for, guarded
from howtobench.judges.base import Judge, Judgment, with_lengths
from howtobench.judges.panel import PanelJudge, PanelSpec, load_panel
from howtobench.judges.prompts import DEFAULT_PROMPT_LANGUAGE
from howtobench.judges.tree import Tree
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.types import LLMClient
from howtobench.llm.wire import provider_defaults
from howtobench.suggest import unknown_name

LANGUAGES: tuple[str, ...] = ("zh", "en")


def adhoc_item(instruction: str, reference: str | None, information: str, task: Task, language: Language) -> Item:
    """An Item for a text outside the benchmark; its id is a hash of its content (stable for the cache)."""
    digest = hashlib.sha256("\0".join((instruction, information, reference or "", task)).encode()).hexdigest()
    return Item(infer_id=f"adhoc-{digest[:16]}", task_type=task, basic_instruction=instruction,
                information=information, reference=reference or "", language=language)


def judge_endpoint(judge: EndpointConfig | LLMClient | None, base_url: str | None, model: str | None,
                   api_key_env: str | None, provider: str | None = None) -> EndpointConfig | LLMClient | None:
    """The judge from either `judge=` or the `base_url=` / `model=` shorthand (not both); `provider=` names a
    server's defaults (llm.wire.PROVIDERS: its base URL, key variable, JSON mode), under what is given."""
    if base_url is None and model is None and provider is None:
        if api_key_env is not None:
            raise ConfigError("api_key_env= needs base_url= and model=")
        return judge
    if judge is not None:
        raise ConfigError("give judge= or base_url=/model=/provider=, not both")
    profile = provider_defaults(provider, model) if provider is not None else {}
    given = {"base_urls": None if base_url is None else (base_url,), "api_key_env": api_key_env}
    settings = {**profile, **{k: v for k, v in given.items() if v is not None}}
    if model is None or "base_urls" not in settings:
        raise ConfigError(f"provider={provider!r} needs model= (the judge's model name)" if provider is not None and
                          model is None else "give both base_url= and model= (the judge's server and its model name)")
    return EndpointConfig.model_validate({"model": model, **settings})


@asynccontextmanager
async def _client(judge: EndpointConfig | LLMClient | None, workspace: str | Path | None) -> AsyncIterator[LLMClient]:
    if judge is not None and not isinstance(judge, EndpointConfig):
        yield judge
        return
    from howtobench.steps.client import step_client
    from howtobench.steps.settings import Execution

    # one writing: the step layer's live client, no preflight (the call itself is the check), as before
    async with step_client(judge, Execution(workspace=resolve_workspace(workspace)), purpose="judge", run_id=None,
                           items=1, check=False) as step:
        assert step.client is not None  # a ToW judge always calls a model
        yield step.client


async def ascore(
    instruction: str,
    writing: str,
    reference: str | None = None,
    *,
    information: str = "",
    task: Task = "open",
    language: Language = "zh",
    prompt_language: str = DEFAULT_PROMPT_LANGUAGE,
    reference_source: str = "human",
    tree: Tree | str | Path = "default",
    judge: EndpointConfig | LLMClient | None = None,
    base_url: str | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    provider: str | None = None,
    workspace: str | Path | None = None,
    panel: PanelSpec | str | Path | None = None,
    guard: GuardSettings | str | None = None,
    **options: Any,
) -> Judgment:
    """Judge one writing with ToW. Without `reference`, the reference-free prompts (absolute anchors) are used.

    `task` picks the tree's nodes (the default "open" has Content, Format and Impression; "completion" has no
    Format). `language` is the text's language; `prompt_language` the judge prompts' (en, the authors', by default;
    zh our Chinese templates), recorded as `Judgment.prompt_language`. `reference_source` says whose writing
    `reference` is ("human", or e.g. "model:deepseek-chat" for Appendix B.3's model references), recorded as
    `Judgment.reference_source`. `options` go to `TreeOfWriting`
    (renormalize, samples, max_tokens, ...). Returns the full Judgment:
    `.score` is the root (None when a leaf failed), `.leaves` every sub-score with its reason. `panel` (a
    `PanelSpec` or a panel YAML file, instead of `judge`) judges with every judge of the panel and combines their
    roots (judges.panel); `.panel.members` holds each judge's own judgment. `guard` ("flag", "skip" or a
    `howtobench.guard.GuardSettings`) checks the writing first (docs/guard.md): its signals in `.meta["guard"]`, and
    under "skip" a degenerate writing is a failed judgment with the reason, made without any judge call.
    """
    options = _tow_options(options)
    checks = guard_for(guard)
    if task not in TASKS or language not in LANGUAGES:
        raise ConfigError(unknown_name("task", task, TASKS) if task not in TASKS else
                          unknown_name("language", language, LANGUAGES))
    item = adhoc_item(instruction, reference, information, task, language)
    if reference and reference.strip():
        item = item.model_copy(update={"reference_source": reference_source})
    text = Writing(infer_id=item.id, model="user", output=writing)
    with_reference = bool(reference and reference.strip())
    if panel is not None:
        if judge is not None or base_url is not None or model is not None:
            raise ConfigError("give panel= or a judge (judge= / base_url= and model=), not both")
        spec = panel if isinstance(panel, PanelSpec) else load_panel(Path(panel))
        from howtobench.steps.client import panel_clients
        from howtobench.steps.settings import Execution

        # the members' clients opened as the jobs and serve open them; no preflight (the call itself is the check)
        async with panel_clients(spec, Execution(workspace=resolve_workspace(workspace)), run_id=None, items=1,
                                 check=False) as steps:
            judges: dict[str, Judge] = {}
            for name, step in steps.items():
                assert step.client is not None  # a ToW judge always calls a model
                judges[name] = TreeOfWriting(step.client, tree=tree, with_reference=with_reference,
                                             prompt_language=prompt_language, **options)
            return with_lengths(await guarded(PanelJudge(spec, judges), checks).judge(item, text), item, text)
    endpoint = judge_endpoint(judge, base_url, model, api_key_env, provider)
    async with _client(endpoint, workspace) as client:
        judge_ = TreeOfWriting(client, tree=tree, with_reference=with_reference, prompt_language=prompt_language,
                               **options)
        return with_lengths(await guarded(judge_, checks).judge(item, text), item, text)


_SET_BY_SCORE = ("self", "client", "tree", "with_reference", "prompt_language")


def _tow_options(options: dict[str, Any]) -> dict[str, Any]:
    """The `**options` of `ascore`, checked before anything is loaded: `method=` names the Tree-of-Writing or stops
    with what to use instead (a bare TypeError from TreeOfWriting said nothing), and every other key is one of
    TreeOfWriting's own settings (else a did-you-mean)."""
    method = options.pop("method", "tow")
    if str(method).lower() != "tow":
        raise ConfigError(f"score() judges with the Tree-of-Writing only, not method={method!r}: for a baseline judge "
                          f"a writings file with `howtobench judge --method {method} --writings FILE`")
    known = [name for name in inspect.signature(TreeOfWriting.__init__).parameters if name not in _SET_BY_SCORE]
    for key in options:
        if key not in known:
            raise ConfigError("score(): " + unknown_name("option", key, known))
    return options


def score(instruction: str, writing: str, reference: str | None = None, **kwargs: Any) -> Judgment:
    """Synchronous `ascore`, for scripts and notebooks alike: inside a running event loop (a Jupyter cell) it runs on
    a loop of its own in a worker thread and blocks until the judgment is back (`await howtobench.ascore()` there
    does not block the notebook's loop)."""
    return run_anywhere(ascore(instruction, writing, reference, **kwargs))


# help(howtobench.score) and editors show ascore's parameters and their explanation, not just **kwargs
score.__doc__ = f"{score.__doc__}\n\n{ascore.__doc__}"
score.__signature__ = inspect.signature(ascore).replace(return_annotation=Judgment)  # type: ignore[attr-defined]
