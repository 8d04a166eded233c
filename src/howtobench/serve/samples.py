"""From a trainer's request to what the judge reads: the item a label names and the response a query holds.

A label names the instruction a response answers:

    "guide/infer_354"                 a benchmark item (its instruction, information and human reference)
    {"instruction": ..., ...}         an instruction of the user's own (a JSON object or its text), with the optional
                                      `information`, `reference`, `task` (default "open"), `genre`, `language`
    "" or None                        reference-free, the prompt itself as the instruction

OpenRLHF sends the query as the decoded prompt tokens followed by the response tokens, special tokens kept
(`openrlhf/utils/agent.py`), so the response is what follows the prompt, with the end-of-turn markers of common
chat templates stripped from its end. A query that does not start with its prompt cannot be split honestly: that
sample gets no reward (`SampleError`), never a guess at where the response begins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from howtobench import strict_json
from howtobench.api import LANGUAGES, adhoc_item
from howtobench.data.models import TASKS, Item
from howtobench.suggest import unknown_name

END_OF_TURN_MARKERS: tuple[str, ...] = (
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "<|eom_id|>", "</s>", "<eos>",
    "<end_of_turn>", "<｜end▁of▁sentence｜>", "<|return|>", "[/INST]", "<|user|>", "<|assistant|>",
)
"""Tokens a chat template or a sampler leaves after the response (ChatML, Llama 3, Mistral, Gemma, DeepSeek, GLM,
gpt-oss): none of them is writing."""

LABEL_FIELDS = frozenset({"instruction", "information", "reference", "task", "genre", "language"})


class SampleError(ValueError):
    """A sample the judge cannot be asked about (bad label, a query that does not continue its prompt): its reward
    is null with this message; the rest of the request is judged."""


@dataclass(frozen=True)
class Sample:
    """One response to judge against one item; `group` keys the samples whose rewards `group-mean` may average."""

    item: Item
    response: str

    @property
    def group(self) -> str:
        return self.item.id


def response_of(query: str, prompt: str | None) -> str:
    """The response inside an OpenRLHF query: the text after `prompt`, trailing end-of-turn markers removed."""
    if prompt:
        if not query.startswith(prompt):
            raise SampleError("the query does not start with its prompt, so the response cannot be told apart "
                              "(was the prompt truncated, or decoded differently?)")
        query = query[len(prompt):]
    return strip_end_markers(query)


def strip_end_markers(text: str) -> str:
    """`text` without the end-of-turn markers (and the whitespace between them) at its end."""
    while True:
        stripped = text.rstrip()
        marker = next((m for m in END_OF_TURN_MARKERS if stripped.endswith(m)), None)
        if marker is None:
            return stripped
        text = stripped[: -len(marker)]


class ItemIndex:
    """The benchmark items a label may name (`<task>/<infer_id>`), loaded once by the server."""

    def __init__(self, items: list[Item]) -> None:
        self._by_id = {item.id: item for item in items}

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, name: str) -> Item:
        task, sep, infer_id = name.partition("/")
        if not sep or task not in TASKS:
            raise SampleError(f"label {name!r} names no benchmark item: write <task>/<infer_id> "
                              f"(task one of {', '.join(TASKS)}) or a JSON object with an instruction")
        item = self._by_id.get(infer_id)
        if item is None or item.task != task:
            loaded = f"{len(self)} items loaded" if self._by_id else "no benchmark loaded (--data)"
            raise SampleError(f"label {name!r}: no such item ({loaded})")
        return item


def item_of(label: Any, prompt: str | None, items: ItemIndex) -> Item:
    """The item a label names (module docstring); the prompt is the instruction of an empty label."""
    if label is None or (isinstance(label, str) and not label.strip()):
        if not prompt or not prompt.strip():
            raise SampleError("an empty label needs a prompt: it is the instruction judged against")
        return adhoc_item(prompt, None, "", "open", "zh")
    if isinstance(label, str):
        text = label.strip()
        if not text.startswith("{"):
            return items.get(text)
        try:
            label = strict_json.loads(text)
        except ValueError as exc:
            raise SampleError(f"label is not valid JSON: {exc}") from exc
    if not isinstance(label, Mapping):
        raise SampleError(f"a label is a string or an object, not {type(label).__name__}")
    return _own_item(label)


def _own_item(label: Mapping[str, Any]) -> Item:
    unknown = sorted(set(label) - LABEL_FIELDS)
    if unknown:
        raise SampleError(f"label fields {unknown} are not known; use {sorted(LABEL_FIELDS)}")
    instruction = label.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise SampleError("a label object needs a non-empty 'instruction'")
    task, language = label.get("task", "open"), label.get("language", "zh")
    if task not in TASKS:
        raise SampleError(unknown_name("task", str(task), TASKS))
    if language not in LANGUAGES:
        raise SampleError(unknown_name("language", str(language), LANGUAGES))
    texts = {k: label.get(k) or "" for k in ("information", "reference", "genre")}
    if not all(isinstance(v, str) for v in texts.values()):
        raise SampleError("information, reference and genre must be strings")
    item = adhoc_item(instruction, texts["reference"] or None, texts["information"], task, language)
    return item.model_copy(update={"genre": texts["genre"]}) if texts["genre"] else item
