"""The model under test writes for the benchmark: W = LLM(I, G) (paper section 4.1).

What the model sees is chosen by the prompt style. The default, "release", sends exactly what the
paper's ten models were asked: the release's `basic_instruction` and `information` joined by a blank
line (`Item.task_prompt`; the instruction is self-contained, e.g. "请根据上下文补全以下文章中用
[fill in the blank] 特殊符号标记出的内容。" followed by the marked text), so a new model's writings are
comparable with Table 4. The named style "framed" wraps them in our own framing (delimiters, "output
only the filled-in text", "give the complete text"): Jinja templates in
`prompts_generate/<language>/<task>.j2`. The style's hash is the request's `template_version`, so
changing a prompt re-generates exactly the writings it affects.

The output is the release's inference JSONL (`infer_id, bench_id, task_type, sub_task, model, output`)
plus a `generation` record (sampling, system prompt, template hash, cache key, tokens) and the
reasoning trace in its own field, so a generated file and a shipped one load the same way.

The file is the state. Every writing is appended the moment it is finished; a re-run skips the items
already there, and the client's cache means a killed run repeats no finished call. A call that fails
is not written as an (empty) writing — that would be scored as the model's answer — but listed in
`<output>.failed.jsonl` and tried again on the next run. A run-level error from the client (errors.py:
bad key, unreachable or dead endpoint, replay miss) cancels the calls in flight and propagates: nothing is
written for them, and the next run picks them up.

The server's `finish_reason` decides what a reply is (`finish_problem`): text cut by max_tokens (or a
content filter) is kept and flagged `truncated` on its row, which the leaderboard counts; an answer that is
empty because it was cut, or a `<think>` that never closes (the reasoning used up every token), is a failed
generation with that reason — never an empty writing, which ToW would score as the model's lowest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2

from howtobench.data.models import Item
from howtobench.data.rows import read_appended_rows
from howtobench.errors import DataError
from howtobench.llm.replies import finish_problem, is_truncated, split_reasoning
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient, SamplingParams, Usage
from howtobench.outputs import output_file, write_text_atomic, writing
from howtobench.runloop import DurableLines, LoopSettings, run_loop
from howtobench.version import __version__

PromptLanguage = Literal["zh", "en"]
PromptStyle = Literal["release", "framed"]
PROMPT_STYLES: tuple[str, ...] = ("release", "framed")
RELEASE_STYLE_VERSION = "release: basic_instruction + \\n\\n + information"
PURPOSE = "generation"
BLANK_RE = re.compile(r"\[\s*fill[ _]in[ _]the[ _]blank\s*\]", re.IGNORECASE)
DEFAULT_MARKER = "[fill in the blank]"


@dataclass(frozen=True)
class GenerateSettings:
    """Everything besides the item that decides what the model is asked; recorded with each writing."""

    sampling: SamplingParams = field(default_factory=lambda: SamplingParams(temperature=0.7, max_tokens=4096, seed=0))
    system_prompt: str | None = None
    prompt_style: PromptStyle = "release"  # "framed": our templates around the two fields
    prompt_language: PromptLanguage | None = None  # framed style only; None: each item's own language
    model_name: str | None = None  # the name written to the output; None: the endpoint's model


@dataclass
class GenerateSummary:
    """What one `generate_writings` call did."""

    out_path: Path
    model: str
    requested: int
    skipped: int = 0
    written: int = 0
    empty: int = 0
    truncated: int = 0
    failed: int = 0
    usage: Usage = field(default_factory=Usage)


# ------------------------------------------------------------------ prompts


@cache
def template_source(language: str, task: str) -> str:
    path = resources.files("howtobench").joinpath(f"prompts_generate/{language}/{task}.j2")
    return path.read_text(encoding="utf-8")


@cache
def template_hash(language: str, task: str, style: PromptStyle = "release") -> str:
    """sha256 (first 16 hex) of what shapes the prompt (the framed template's source, or the release rule)."""
    source = RELEASE_STYLE_VERSION if style == "release" else template_source(language, task)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


_ENV = jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def blank_marker(information: str) -> str | None:
    """The fill-in mark as written in the text (the release uses `[fill in the blank]`); None if absent."""
    found = BLANK_RE.search(information)
    return found.group(0) if found else None


def render_prompt(item: Item, language: PromptLanguage | None = None, style: PromptStyle = "release") -> str:
    """The user message for one item: the release's two fields as they are (style "release"), or our framing of
    the instruction plus the marked text (Completion) or outline (Guide) (style "framed")."""
    if style == "release":
        return item.task_prompt
    if style != "framed":
        raise DataError(f"unknown prompt style {style!r}; known: {', '.join(PROMPT_STYLES)}")
    lang = language or item.language
    template = _ENV.from_string(template_source(lang, item.task))
    marker = blank_marker(item.information) or DEFAULT_MARKER
    return template.render(instruction=item.instruction.strip(), information=item.information.strip(), marker=marker)


def build_request(item: Item, settings: GenerateSettings) -> ChatRequest:
    lang = settings.prompt_language or item.language
    messages: list[dict[str, str]] = []
    if settings.system_prompt:
        messages.append({"role": "system", "content": settings.system_prompt})
    messages.append({"role": "user", "content": render_prompt(item, lang, settings.prompt_style)})
    return ChatRequest(
        messages=tuple(messages),
        sampling=settings.sampling,
        purpose=PURPOSE,
        template_version=template_hash(lang, item.task, settings.prompt_style),
    )


# ------------------------------------------------------------------ records


def writing_record(
    item: Item, model: str, result: ChatResult, request: ChatRequest, settings: GenerateSettings
) -> dict[str, Any]:
    """One line of the output, in the release's inference layout plus what produced it."""
    output, reasoning = split_reasoning(result.text or "", result.reasoning)
    return {
        "infer_id": item.id,
        "bench_id": item.bench_id,
        "task_type": item.task,
        "sub_task": item.sub_task,
        "model": model,
        "output": output,
        "truncated": is_truncated(result),
        "reasoning": reasoning,
        "generation": {
            "toolkit": __version__,
            "sampling": settings.sampling.model_dump(mode="json"),
            "system_prompt": settings.system_prompt,
            "prompt_style": settings.prompt_style,
            "prompt_language": settings.prompt_language or item.language,
            "template_version": request.template_version,
            "blank_marker_found": blank_marker(item.information) is not None if item.task == "completion" else None,
            "finish_reason": result.finish_reason,
            "cache_key": result.cache_key,
            "from_cache": result.from_cache,
            "usage": result.usage.model_dump(mode="json"),
        },
    }


def failure_record(item: Item, model: str, result: ChatResult, error: str | None = None) -> dict[str, Any]:
    """A line of `<out>.failed.jsonl`: the call's own error, or why its complete reply is no writing."""
    return {
        "infer_id": item.id,
        "task_type": item.task,
        "model": model,
        "error": error or result.error,
        "finish_reason": result.finish_reason,
        "raw_text": result.raw_text,
    }


def read_generated(path: Path, model: str, *, repair: bool = True) -> set[str]:
    """Ids already written for `model`; a torn last line (a kill mid-write) is cut off the file when `repair`
    (a dry run reads without repairing: it writes nothing)."""
    done: set[str] = set()
    for number, row in read_appended_rows(path, json.loads, "JSON", repair=repair):
        if row.get("model") != model:
            raise DataError(f"{path}:{number}: writing of model {row.get('model')!r}, expected {model!r}")
        done.add(str(row["infer_id"]))
    return done


# ------------------------------------------------------------------ the run


@dataclass
class _Writer:
    """Appends each finished writing at once (a kill loses only calls in flight), keeps the failed calls for
    `<out>.failed.jsonl` and the tally (the runner loop's sink)."""

    out: DurableLines
    settings: GenerateSettings
    summary: GenerateSummary
    failures: list[dict[str, Any]] = field(default_factory=list)

    def record(self, finished: tuple[Item, ChatRequest, ChatResult]) -> bool:
        """Record one outcome; True when it is a failed generation."""
        item, request, result = finished
        s = self.summary
        s.usage = s.usage + result.usage
        problem = finish_problem(result, request.sampling.max_tokens) if result.ok else None
        if not result.ok or problem:
            self.failures.append(failure_record(item, s.model, result, problem))
            s.failed += 1
            return True
        record = writing_record(item, s.model, result, request, self.settings)
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        s.written += 1
        s.empty += int(not record["output"].strip())
        s.truncated += int(record["truncated"])
        return False

    def stats(self) -> str:
        s = self.summary
        if not (s.written or s.failed):
            return ""
        return (f"written {s.written} · empty {s.empty} · truncated {s.truncated} · failed {s.failed} · "
                f"tokens {s.usage.completion_tokens:,} · {s.usage.cost_text()}")


async def generate_writings(
    client: LLMClient,
    items: Sequence[Item],
    out_path: Path,
    *,
    settings: GenerateSettings | None = None,
    concurrency: int = 8,
    progress: bool = True,
    max_failed_rate: float | None = None,
) -> GenerateSummary:
    """Write every item not yet in `out_path` with `client`, appending each writing as it finishes
    (`runloop.run_loop`).

    Raises the client's first run-level error (nothing written for the calls in flight) and `TooManyFailures`
    once the failed share passes `max_failed_rate`; the failures so far are listed either way."""
    settings = settings or GenerateSettings()
    model = settings.model_name or client.model
    output_file(out_path)
    done = read_generated(out_path, model)
    todo = [it for it in items if it.id not in done]
    summary = GenerateSummary(out_path=out_path, model=model, requested=len(items), skipped=len(items) - len(todo))

    async def one(item: Item) -> tuple[Item, ChatRequest, ChatResult]:
        request = build_request(item, settings)
        return item, request, await client.chat(request)

    loop = LoopSettings(f"generate · {model}", concurrency, progress, max_failed_rate, "generations")
    with DurableLines(out_path) as out:
        writer = _Writer(out, settings, summary)
        try:
            await run_loop(todo, one, writer, loop)
        finally:
            _write_failures(out_path, writer.failures)
    return summary


def safe_file_stem(name: str) -> str:
    """`name` (a model or run name such as org/model:tag) made safe as one path component: other than letters,
    digits and -._ every character becomes _, so `writings/<model>.jsonl` never escapes its folder."""
    stem = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
    return stem if stem.strip(".") else stem.replace(".", "_") or "_"  # never "", "." or ".."


def failures_path(out_path: Path) -> Path:
    return out_path.with_name(out_path.stem + ".failed.jsonl")


def _write_failures(out_path: Path, failures: list[dict[str, Any]]) -> None:
    """The failures of the latest run (replaced each run: a retried call that succeeds leaves the list)."""
    path = failures_path(out_path)
    if not failures:
        with writing(path):
            path.unlink(missing_ok=True)
        return
    write_text_atomic(path, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in failures))
