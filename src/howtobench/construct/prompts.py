"""Prompt templates and per-genre data for the construction steps (files in prompts/ and data/).

Templates are Jinja2 text files, one per step and language; the part before the line `=== user ===` is the
system message. The template's hash is the request's `template_version`, so editing a prompt invalidates
exactly its cached calls. Human text inside a prompt is delimited by <text>...</text>, and any such tag
inside the text is defused first, so a text cannot close its own delimiter.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import yaml

from howtobench.data.genres import GENRES
from howtobench.data.models import Language
from howtobench.errors import ConfigError

_SPLIT = "=== user ==="
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


@dataclass(frozen=True)
class Rendered:
    messages: tuple[dict[str, str], ...]
    version: str


def defuse(text: str) -> str:
    """Neutralise our delimiter tags inside untrusted text (full-width brackets keep it readable)."""
    return text.replace("<text>", "＜text＞").replace("</text>", "＜/text＞")


@cache
def _template(name: str, language: Language) -> tuple[str, str]:
    source = resources.files("howtobench.construct").joinpath(f"prompts/{language}/{name}.j2").read_text("utf-8")
    return source, hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def render(name: str, language: Language, **context: Any) -> Rendered:
    """Render prompt `name` in `language` into (system, user) messages; `text` in context is defused."""
    source, version = _template(name, language)
    if "text" in context:
        context["text"] = defuse(str(context["text"]))
    system, _, user = source.partition(_SPLIT)
    messages = (
        {"role": "system", "content": _ENV.from_string(system).render(**context).strip()},
        {"role": "user", "content": _ENV.from_string(user).render(**context).strip()},
    )
    return Rendered(messages=messages, version=version)


@cache
def _data(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(
        resources.files("howtobench.construct").joinpath(f"data/{name}.yaml").read_text("utf-8")
    )
    return loaded


def genre_knowledge(genre: str) -> dict[str, Any]:
    """desc / rubric / traits of a genre (both languages)."""
    table = _data("genres")
    if genre not in table:
        raise ConfigError(f"construct/data/genres.yaml has no entry for genre {genre!r}")
    entry: dict[str, Any] = table[genre]
    return entry


def genre_label(genre: str, language: Language) -> str:
    """The genre's name in the item's language (Chinese label or lower-case English name)."""
    g = GENRES[genre]
    return g.zh if language == "zh" else g.en.lower()


def example_for(genre: str, language: Language) -> dict[str, Any]:
    """The genre's in-context example, else that of the genre it is reported under, else `others`."""
    examples = _data("examples")
    for key in (genre, GENRES[genre].reported_as, "others"):
        if key in examples:
            example: dict[str, Any] = examples[key][language]
            return example
    raise ConfigError("construct/data/examples.yaml has no `others` example")


def instruction_template(task: str, language: Language) -> str:
    template: str = _data("instructions")[task][language]
    return template


def example_json(example: dict[str, Any]) -> str:
    """The example answer as the JSON the model should produce; its lines are "trait: requirement"."""
    info = dict(_split_trait(line) for line in example["information"])
    return json.dumps({"summary": example["summary"], "theme": example["theme"], "information": info},
                      ensure_ascii=False, indent=1)


def _split_trait(line: str) -> tuple[str, str]:
    for sep in ("：", ": "):
        if sep in line:
            trait, _, text = line.partition(sep)
            return trait.strip(), text.strip()
    raise ConfigError(f"construct/data/examples.yaml: information line without 'trait: text': {line!r}")
