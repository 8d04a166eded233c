"""Judge prompts from template files (`<language>/*.j2`), laid out for prefix caching.

Every leaf call on one writing is `[system, user]` where the user message is
`prefix + rubric`: the prefix (task, grounding information, reference, the writing) is byte-identical
for all leaves of that writing and the leaf-specific rubric comes last, so servers with prefix caching
(llama.cpp, vLLM, SGLang, hosted prompt caching) process the long shared part once per writing.
(One user message rather than two: chat templates such as Gemma's require alternating roles.)

Model text is untrusted: the writing sits between <<<WRITING>>> markers, with a note that requests
inside it are not to be followed, and marker look-alikes inside it are defused (`defuse`).
Without a reference (`with_reference=False`) no reference text is rendered at all and the rubrics
use absolute anchors. `Prompts.hash` (sha256 of the template files used) becomes each request's
`template_version`, so editing a template invalidates exactly its cached calls.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

from howtobench.data.models import Item
from howtobench.errors import JudgeError
from howtobench.judges.tree import Leaf, Node, Tree

PROMPTS_DIR = Path(__file__).parent
SHARED_TEMPLATES: tuple[str, ...] = ("system", "prefix", "reply", "weights")
Messages = tuple[dict[str, str], ...]


def defuse(text: str) -> str:
    """Break any `<<<`/`>>>` run in untrusted text so it cannot close or fake our delimiters."""
    return text.replace("<<<", "< < <").replace(">>>", "> > >")


def leaf_schema(leaf: Leaf) -> dict[str, Any]:
    """Reply schema of one leaf: a short reason, then a score from the leaf's explicit scale (an enum)."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string", "maxLength": 400},
            "score": {"type": "integer", "enum": list(leaf.scale)},
        },
        "required": ["reason", "score"],
        "additionalProperties": False,
    }


def weights_schema(nodes: tuple[Node, ...]) -> dict[str, Any]:
    """Reply schema of the negotiator: {node id: {leaf id: number}}; the range and the sum are checked by us."""
    def group(node: Node) -> dict[str, Any]:
        ids = [leaf.id for leaf in node.leaves]
        return {"type": "object", "properties": {i: {"type": "number"} for i in ids}, "required": ids,
                "additionalProperties": False}

    return {
        "type": "object",
        "properties": {node.id: group(node) for node in nodes},
        "required": [node.id for node in nodes],
        "additionalProperties": False,
    }


class Prompts:
    """Renders every judge prompt of one tree in one language, with or without the reference."""

    def __init__(
        self, tree: Tree, language: str = "zh", *, with_reference: bool = True, prompts_dir: Path | None = None
    ) -> None:
        folder = (prompts_dir or PROMPTS_DIR) / language
        if not folder.is_dir():
            raise JudgeError(f"no prompt templates for language {language!r} in {folder.parent}")
        self.tree, self.language, self.with_reference, self.folder = tree, language, with_reference, folder
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            autoescape=False,  # plain-text prompts; untrusted text is delimited and defused instead
        )

    def _render(self, name: str, **context: Any) -> str:
        try:
            return self.env.get_template(f"{name}.j2").render(**context)
        except jinja2.TemplateError as exc:
            raise JudgeError(f"prompt template {self.folder / name}.j2: {exc}") from exc

    @cached_property
    def template_names(self) -> tuple[str, ...]:
        leaf_templates = {leaf.template_name for n in self.tree.nodes for leaf in n.leaves if leaf.is_llm}
        return tuple(sorted(set(SHARED_TEMPLATES) | leaf_templates))

    @cached_property
    def hash(self) -> str:
        """sha256 over the names and bytes of the template files this tree uses in this language."""
        digest = hashlib.sha256()
        for name in self.template_names:
            path = self.folder / f"{name}.j2"
            if not path.exists():
                raise JudgeError(f"prompt template {path} is missing")
            digest.update(f"{self.language}/{name}.j2\0".encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()

    def system(self) -> str:
        return self._render("system")

    def prefix(self, item: Item, writing: str) -> str:
        """The part shared by every leaf call on this writing (identical bytes for all leaves)."""
        reference = defuse(item.reference) if self.with_reference and item.reference.strip() else ""
        return self._render(
            "prefix",
            instruction=item.instruction,
            information=item.information.strip(),
            reference=reference,
            anchor=self.tree.reference_anchor,
            writing=defuse(writing),
        )

    def rubric(self, leaf: Leaf, *, has_reference: bool) -> str:
        """The leaf-specific tail: criterion, scale, anchors and reply format."""
        return self._render(
            leaf.template_name,
            label=leaf.label.get(self.language),
            criteria=leaf.criteria.get(self.language).strip(),
            scale=leaf.scale,
            reference=has_reference,
            anchor=self.tree.reference_anchor,
        )

    def leaf_messages(self, item: Item, writing: str, leaf: Leaf) -> Messages:
        has_reference = self.with_reference and bool(item.reference.strip())
        user = self.prefix(item, writing) + self.rubric(leaf, has_reference=has_reference)
        return ({"role": "system", "content": self.system()}, {"role": "user", "content": user})

    def weights_messages(self, item: Item, nodes: tuple[Node, ...]) -> Messages:
        """The negotiator's prompt: instruction, grounding and the leaves of every negotiated node."""
        views = [
            {
                "id": node.id,
                "label": node.label.get(self.language),
                "leaves": [
                    {"id": x.id, "label": x.label.get(self.language), "criteria": x.criteria.get(self.language).strip()}
                    for x in node.leaves
                ],
            }
            for node in nodes
        ]
        example = {node.id: _example_weights([x.id for x in node.leaves]) for node in nodes}
        user = self._render(
            "weights",
            task=item.task,
            instruction=item.instruction,
            information=item.information.strip(),
            nodes=views,
            example=json.dumps(example, ensure_ascii=False),
        )
        return ({"role": "user", "content": user},)


def _example_weights(ids: list[str]) -> dict[str, float]:
    """A format example that obeys the rules (sums to 1) without suggesting uniform weights."""
    n = len(ids)
    raw = [round((n - k) / (n * (n + 1) / 2), 2) for k in range(n)]
    raw[-1] = round(1 - sum(raw[:-1]), 2)
    return dict(zip(ids, raw, strict=True))
