"""Genre transfer: an LLM rewrites a writing into another genre (comment, letter, official, poem).

The paper's strongest perturbation: the content survives but the writing no longer answers
the instruction's genre, so a good judge must score it lower. The rewrite goes through the
client layer like every other call (cached, retried); a failed call is returned as a failed
perturbation with the raw reply kept, never replaced by the original text.

Prompts are jinja2 templates under `robustness/prompts/<lang>/transfer.j2` (our own words);
the model text is delimited by tags and any closing tag inside it is neutralised.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

import jinja2
import yaml

from howtobench.data.models import Language
from howtobench.llm.replies import finish_problem, is_truncated
from howtobench.llm.types import ChatRequest, LLMClient, SamplingParams
from howtobench.robustness.perturb import Perturbation, PerturbContext, Perturbed, failed


def _load_genres() -> dict[str, dict[str, tuple[str, str]]]:
    """genre id -> language -> (the genre's name in the prompt, its one rule), from the table beside the prompts
    (data, kept out of the code)."""
    text = resources.files("howtobench.robustness").joinpath("prompts/transfer_genres.yaml").read_text("utf-8")
    return {genre: {language: (entry["name"], entry["rule"]) for language, entry in languages.items()}
            for genre, languages in yaml.safe_load(text).items()}


TRANSFER_GENRES: dict[str, dict[str, tuple[str, str]]] = _load_genres()
TRANSFER_KINDS: tuple[str, ...] = tuple(f"transfer-{genre}" for genre in TRANSFER_GENRES)
_SPLIT = "=====USER====="
_CLOSING = {"zh": "</原文>", "en": "</source>"}
MAX_TOKENS = 4096


@cache
def _template_source(language: Language) -> str:
    return resources.files("howtobench.robustness").joinpath(f"prompts/{language}/transfer.j2").read_text("utf-8")


def template_version(language: Language) -> str:
    """Hash of the template text: editing the prompt invalidates exactly its cached calls."""
    return hashlib.sha256(_template_source(language).encode()).hexdigest()[:16]


def build_request(text: str, genre: str, seed: int, language: Language) -> ChatRequest:
    """The chat request that rewrites `text` into `genre`."""
    name, genre_rule = TRANSFER_GENRES[genre][language]
    safe = text.replace(_CLOSING[language], _CLOSING[language].replace("/", "／"))
    env = jinja2.Environment(autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)
    rendered = env.from_string(_template_source(language)).render(genre_name=name, genre_rule=genre_rule, writing=safe)
    system, user = (part.strip() for part in rendered.split(_SPLIT, 1))
    return ChatRequest(
        messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
        sampling=SamplingParams(temperature=0.0, max_tokens=MAX_TOKENS, seed=seed),
        purpose=f"perturb:transfer-{genre}",
        template_version=template_version(language),
    )


async def transfer(text: str, seed: int, ctx: PerturbContext, client: LLMClient, genre: str) -> Perturbed:
    """Rewrite `text` into `genre`; a failed, empty or cut-short reply is a failed perturbation (a rewrite stopped
    by max_tokens would be judged for being unfinished, not for its genre)."""
    kind = f"transfer-{genre}"
    result = await client.chat(build_request(text, genre, seed, ctx.language))
    rewritten = (result.text or "").strip()
    problem = finish_problem(result, MAX_TOKENS) if result.ok else result.error
    if not problem and is_truncated(result):
        problem = f"the rewrite was cut short (finish_reason {result.finish_reason!r}): a partial text is no transfer"
    if problem or not rewritten:
        reason = problem or "the model returned an empty rewrite"
        detail = {"model": client.model, "raw_text": result.raw_text, "cache_key": result.cache_key}
        return Perturbed(None, failed(kind, seed, reason).record.model_copy(update={"changes": (detail,)}))
    change = {"genre": genre, "model": client.model, "cache_key": result.cache_key, "chars": len(rewritten)}
    return Perturbed(rewritten, Perturbation(kind=kind, seed=seed, changes=(change,)))
