"""What every one-call LLM baseline shares: prompt rendering, self-consistency sampling, the judgment record.

A baseline says three things: the tail of its prompt (`tail`), the reply schema (`schema`, scores as
enums of 1..10) and how a validated reply becomes a score (`parse`), both built from the pieces in
`replies.py`. `LLMBaseline.judge` does the rest:

* the prompt is `[system, prefix + tail]`; the prefix (the writing instructions = `Item.task_prompt`, the
  instruction and its information joined by a blank line as the authors' judges read them; the reference; the
  writing between defused markers) comes first so prefix-caching servers read the writing once across methods;
  the system prompt is the paper's plain reviewer role, nothing about length; the token budget is the authors'
  4,096 and replies carry their reason before the score, with no length cap;
* `samples=n` sends n requests that differ only by `sample_index` (cached per index) and, when n > 1,
  temperature 0.7 by default and seed = sample index; every sample is kept in `Judgment.samples`;
* `Judgment.score` is the mean over valid samples. A sample whose reply fails or does not parse is kept
  with its raw text and error, never given a score; if some samples failed the judgment is flagged
  `renormalized` (mean of the rest), if all failed it is `failed` with no score;
* an empty writing gets the lowest score (1) without a call, flagged `empty`, as ToW does.
"""

from __future__ import annotations

import hashlib
import statistics
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from howtobench.concurrency import gather_or_cancel
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import Judgment, LeafResult, SampleResult, Status, source_if_read
from howtobench.judges.baselines.replies import LOWEST, ReplyError
from howtobench.judges.prompts import (
    AUTHORS_MAX_TOKENS,
    DEFAULT_PROMPT_LANGUAGE,
    PROMPTS_DIR,
    TemplateFolder,
    check_prompt_language,
    defuse,
)
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient, SamplingParams, Usage

SAMPLE_TEMPERATURE = 0.7
REFERENCE_ANCHOR = 6  # the same anchor as the default ToW tree, so baselines and ToW read the reference alike
Messages = tuple[dict[str, str], ...]


@dataclass(frozen=True)
class Parsed:
    """What one valid reply says: the score, its sub-scores, and method-specific facts for `meta`."""

    score: float
    leaves: list[LeafResult] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


class BaselinePrompts:
    """Renders `baseline_*.j2` templates of one language; `hash` covers every template file used."""

    def __init__(self, language: str, names: tuple[str, ...], prompts_dir: Path | None = None) -> None:
        self.folder = (prompts_dir or PROMPTS_DIR) / language
        self.names = tuple(sorted({"baseline_system", "baseline_prefix", "baseline_scale", *names}))
        missing = [n for n in self.names if not (self.folder / f"{n}.j2").is_file()]
        if missing:
            raise JudgeError(f"prompt templates missing in {self.folder}: {', '.join(missing)}")
        self.templates = TemplateFolder(self.folder)  # plain text; untrusted text is defused
        digest = hashlib.sha256()
        for name in self.names:
            digest.update(f"{language}/{name}.j2\0".encode() + (self.folder / f"{name}.j2").read_bytes())
        self.hash = digest.hexdigest()

    def render(self, name: str, **context: Any) -> str:
        return self.templates.render(name, **context)

    @cached_property
    def system(self) -> str:
        """The system prompt: no context, the same for every call (rendered once)."""
        return self.render("baseline_system")


class LLMBaseline:
    """One-call LLM judge with optional self-consistency; subclasses define `tail`, `schema`, `parse`."""

    method = ""
    templates: tuple[str, ...] = ()

    def __init__(self, client: LLMClient | None, *, samples: int = 1, temperature: float | None = None,
                 max_tokens: int = AUTHORS_MAX_TOKENS, with_reference: bool = True, anchor: int = REFERENCE_ANCHOR,
                 prompts_dir: Path | None = None, prompt_language: str = DEFAULT_PROMPT_LANGUAGE) -> None:
        """`prompt_language`: the language of every prompt, whatever the item's (English by default, as the
        authors' baseline prompts)."""
        if client is None:
            raise JudgeError(f"the {self.method} judge needs a judge model endpoint")
        if samples < 1:
            raise JudgeError("samples must be at least 1")
        self.client: LLMClient = client
        self.samples, self.with_reference, self.anchor = samples, with_reference, anchor
        self.temperature = temperature if temperature is not None else (SAMPLE_TEMPERATURE if samples > 1 else 0.0)
        self.max_tokens = max_tokens
        self.prompt_language = check_prompt_language(prompt_language)
        self.prompts = BaselinePrompts(self.prompt_language, self.templates, prompts_dir)

    # ---------------------------------------------------------------- hooks
    def tail(self, item: Item, prompts: BaselinePrompts, context: dict[str, Any]) -> str:
        raise NotImplementedError

    def schema(self, item: Item) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: dict[str, Any], item: Item) -> Parsed:
        raise NotImplementedError

    def empty_leaves(self, item: Item) -> list[LeafResult]:
        """Sub-scores an empty writing gets (its lowest on every fixed dimension); none by default."""
        return []

    def extra_meta(self, item: Item) -> dict[str, Any]:
        """Facts about the judge's setup for this item (e.g. which rubric), written into `meta`."""
        return {}

    # ---------------------------------------------------------------- prompts
    def has_reference(self, item: Item) -> bool:
        return self.with_reference and bool(item.reference.strip())

    def messages(self, item: Item, writing: Writing) -> Messages:
        prompts = self.prompts
        context: dict[str, Any] = {
            "instruction": item.task_prompt, "anchor": self.anchor,
            "reference": defuse(item.reference) if self.has_reference(item) else "", "writing": defuse(writing.output),
        }
        user = prompts.render("baseline_prefix", **context) + self.tail(item, prompts, context)
        return ({"role": "system", "content": prompts.system}, {"role": "user", "content": user})

    def request(self, item: Item, writing: Writing, index: int) -> ChatRequest:
        seed = 0 if self.samples > 1 else None  # the client sends seed + sample_index: distinct, reproducible
        return ChatRequest(
            messages=self.messages(item, writing),
            sampling=SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=seed),
            response_schema=self.schema(item), schema_name=f"{self.method}_judgment", purpose=f"baseline:{self.method}",
            template_version=self.prompts.hash + self.version_suffix(item), sample_index=index,
        )

    def version_suffix(self, item: Item) -> str:
        """Extra version text for the cache key (e.g. the rubric's hash); empty by default."""
        return ""

    # ---------------------------------------------------------------- judging
    async def judge(self, item: Item, writing: Writing) -> Judgment:
        if writing.is_empty:
            return self._record(item, writing, [], Usage(), empty=True)
        results = await gather_or_cancel(*(self.client.chat(self.request(item, writing, k))
                                           for k in range(self.samples)))
        samples = [self._sample(k, result, item) for k, result in enumerate(results)]
        usage = sum((r.usage for r in results), Usage())
        return self._record(item, writing, samples, usage)

    def _sample(self, index: int, result: ChatResult, item: Item) -> tuple[SampleResult, dict[str, Any]]:
        base: dict[str, Any] = {"index": index, "cache_key": result.cache_key or None}
        if not result.ok or result.data is None:
            failed = SampleResult(**base, status="failed", error=result.error or "no reply", raw_text=result.raw_text)
            return failed, {}
        try:
            parsed = self.parse(result.data, item)
        except ReplyError as exc:
            return SampleResult(**base, status="failed", error=str(exc), raw_text=result.raw_text or result.text), {}
        return SampleResult(**base, score=parsed.score, leaves=parsed.leaves), parsed.meta

    def _record(self, item: Item, writing: Writing, samples: list[tuple[SampleResult, dict[str, Any]]],
                usage: Usage, *, empty: bool = False) -> Judgment:
        kept = [s for s, _ in samples]
        valid = [s for s in kept if s.status == "ok"]
        scores = [s.score for s in valid if s.score is not None]
        status: Status = "ok" if len(valid) == len(kept) else ("renormalized" if valid else "failed")
        score, leaves = (statistics.fmean(scores) if scores else None), mean_leaves(valid)
        if empty:
            score, status, leaves = LOWEST, "empty", self.empty_leaves(item)
        meta: dict[str, Any] = {
            "samples": self.samples, "temperature": self.temperature, "reference": self.has_reference(item),
            "language": item.language, "sample_scores": [s.score for s in kept], **self.extra_meta(item),
        }
        if empty:
            meta["note"] = "empty writing: lowest score without a judge call"
        for key in sorted({k for _, m in samples for k in m}):  # method facts, one per sample (None when failed)
            meta[key] = [m.get(key) for _, m in samples]
        return Judgment(
            method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre, score=score,
            status=status, leaves=leaves, samples=kept, usage=usage, judge_model=self.client.model,
            failures=[f"sample {s.index}: {s.error}" for s in kept if s.status == "failed"],
            prompt_hash=self.prompts.hash, prompt_language=self.prompt_language,
            reference_source=source_if_read(item, self.has_reference(item)),
            cache_keys=[s.cache_key for s in kept if s.cache_key],
            meta=meta,
        )


def mean_leaves(valid: list[SampleResult]) -> list[LeafResult]:
    """Per-dimension means when every valid sample scored the same dimensions (rubric); else none (auto-plan)."""
    if not valid:
        return []
    if len(valid) == 1:
        return list(valid[0].leaves)
    names = [leaf.name for leaf in valid[0].leaves]
    if any([leaf.name for leaf in s.leaves] != names for s in valid[1:]):
        return []
    columns = [[s.leaves[k].score for s in valid] for k in range(len(names))]
    return [
        LeafResult(name=name, node=valid[0].leaves[k].node, reason=f"mean of {len(valid)} samples",
                   score=statistics.fmean(x for x in column if x is not None) if None not in column else None)
        for k, (name, column) in enumerate(zip(names, columns, strict=True))
    ]


def pick_sample(judgment: Judgment, index: int) -> Judgment:
    """The judgment as if only sample `index` had been drawn (for worst / best over sample batches)."""
    if judgment.status == "empty":
        return judgment
    sample = next((s for s in judgment.samples if s.index == index), None)
    if sample is None:
        raise JudgeError(f"{judgment.method} judgment of {judgment.item_id}/{judgment.model} has no sample {index}")
    status: Status = "ok" if sample.status == "ok" else "failed"
    return judgment.model_copy(update={"score": sample.score, "status": status, "leaves": sample.leaves,
                                       "samples": [sample], "failures": [sample.error] if sample.error else []})
