"""Back-construction (paper 4.5): (S, T, G) = BackConstruct(R) in one LLM call.

S is a one-sentence summary, T a theme of at most five words (English: <= 5 words; Chinese: <= 10
characters, see text.py), G one requirement per trait of the genre, taken from the reference. The prompt
carries one in-context example of the genre (data/examples.yaml). A reply that breaks the limits, or copies
the example's summary or theme, is re-asked with the reason; if it still does, the text's Guide/Open items are
recorded as failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from howtobench.construct import prompts
from howtobench.construct.calls import ask, json_object
from howtobench.construct.records import SourceText
from howtobench.construct.text import count_chars, theme_length, theme_limit
from howtobench.data.models import Language
from howtobench.llm.types import ChatRequest, LLMClient, SamplingParams

MAX_SUMMARY = {"zh": 150, "en": 80}  # characters (zh) / words (en): a sentence, with some slack over the prompt


@dataclass(frozen=True)
class BackConstruction:
    summary: str
    theme: str
    information: tuple[tuple[str, str], ...]  # (trait, requirement) in trait order


def traits_of(genre: str, language: Language) -> list[str]:
    traits: list[str] = prompts.genre_knowledge(genre)["traits"][language]
    return traits


def schema(traits: list[str]) -> dict[str, Any]:
    info = json_object({trait: {"type": "string"} for trait in traits})
    return json_object({"summary": {"type": "string"}, "theme": {"type": "string"}, "information": info})


def request_for(text: SourceText, genre: str) -> ChatRequest:
    traits = traits_of(genre, text.language)
    example = prompts.example_for(genre, text.language)
    rendered = prompts.render(
        "backconstruct", text.language, genre_label=prompts.genre_label(genre, text.language), traits=traits,
        theme_limit=theme_limit(text.language), example=example, example_json=prompts.example_json(example),
        text=text.text,
    )
    return ChatRequest(messages=rendered.messages, sampling=SamplingParams(temperature=0.0, max_tokens=800),
                       response_schema=schema(traits), schema_name="back_construction", purpose="build:make",
                       template_version=rendered.version)


def problems(data: dict[str, Any], language: Language, traits: list[str],
             example: dict[str, Any] | None = None) -> str | None:
    """What is wrong with a reply (None when it is usable): empty fields, a long theme or summary, or the
    in-context example copied back instead of describing the text (small models do this)."""
    summary, theme = str(data.get("summary", "")).strip(), str(data.get("theme", "")).strip()
    info = data.get("information") or {}
    if not summary or not theme:
        return "summary and theme must not be empty"
    if example is not None and (summary == example["summary"].strip() or theme == example["theme"].strip()):
        return "the answer repeats the example; summarise the text given, not the example"
    if theme_length(theme, language) > theme_limit(language):
        unit = "words" if language == "en" else "characters"
        return f"theme {theme!r} is longer than {theme_limit(language)} {unit}"
    size = len(summary.split()) if language == "en" else count_chars(summary)
    if size > MAX_SUMMARY[language]:
        return "summary must be one sentence"
    missing = [t for t in traits if not str(info.get(t, "")).strip()]
    return f"information lacks: {', '.join(missing)}" if missing else None


async def back_construct(client: LLMClient, text: SourceText, genre: str
                         ) -> tuple[BackConstruction | None, str | None]:
    traits = traits_of(genre, text.language)
    example = prompts.example_for(genre, text.language)
    data, error = await ask(client, request_for(text, genre), lambda d: problems(d, text.language, traits, example))
    if data is None:
        return None, error
    info = tuple((t, str(data["information"][t]).strip()) for t in traits)
    return BackConstruction(str(data["summary"]).strip(), str(data["theme"]).strip(), info), None
