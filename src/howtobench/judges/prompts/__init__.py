"""Judge prompts from template files (`<language>/*.j2`), laid out for prefix caching.

Every leaf call on one writing is `[system, user]`. The system prompt is the tree's (`Tree.system`,
identical for every leaf and writing). The user message is `prefix + rubric`: the prefix (the writing
instructions, the reference, the writing) comes first and is byte-identical for all leaves of that writing
that see the reference, and the leaf-specific criteria, bands and reply format come last, so servers with
prefix caching (llama.cpp, vLLM, SGLang, hosted prompt caching) process the long shared part once per
writing. A leaf whose `reference` is "hidden" (the authors' paragraphing) shares only the part before the
reference. (One user message rather than two: chat templates such as Gemma's require alternating roles.)

The "writing instructions" are `Item.task_prompt`: `basic_instruction` and `information` joined by a blank
line, as the authors' judges read them. The reply is a JSON object of a free `analysis` (no length cap) and the
`score` (an enum of the leaf's scale), in the order the authors' prompt for that trait asks (`Leaf.reply`):
the analysis first for opening/ending and language, the score first for the others.

Model text is untrusted: the writing sits between <<<WRITING>>> markers, with a note that requests
inside it are not to be followed, and marker look-alikes inside it are defused (`defuse`).
Without a reference (`with_reference=False`) no reference text is rendered at all and the rubrics
use absolute anchors. `Prompts.hash` (sha256 of the template files used) becomes each request's
`template_version`, so editing a template invalidates exactly its cached calls.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import jinja2

from howtobench.data.models import Item
from howtobench.errors import JudgeError
from howtobench.judges.tree import Leaf, Node, ReplyOrder, Tree

PROMPTS_DIR = Path(__file__).parent
PromptLanguage = Literal["en", "zh"]
PROMPT_LANGUAGES: tuple[PromptLanguage, ...] = ("en", "zh")
DEFAULT_PROMPT_LANGUAGE: PromptLanguage = "en"
"""The language of every judge prompt (ToW leaves, J_W, baselines), whatever the item's language: English by
default, as the authors' judge prompts are for the Chinese benchmark (`code/config/prompts.yaml`); `zh` is the
named option (`--prompt-language zh`). It is part of the prompt hash, so the two never share a cached call."""
SHARED_TEMPLATES: tuple[str, ...] = ("prefix", "reply", "weights")
LeafLayout = Literal["writing-first", "writing-last"]
LEAF_LAYOUTS: tuple[LeafLayout, ...] = ("writing-first", "writing-last")
DEFAULT_LEAF_LAYOUT: LeafLayout = "writing-first"
"""How a leaf call's user message is laid out. "writing-first" (the default): instructions, reference, writing, then
the leaf's criteria, bands and reply format, so a writing's leaves share everything up to the criteria. The named
option "writing-last": instructions, reference, the leaf's criteria, bands and reply format, then the writing and
one closing line (`WRITING_LAST_TEMPLATES`), so the leaf calls of every rollout of one instruction (a GRPO group) share
everything up to the writing. Per sample, with W the writing's tokens, R a leaf's criteria and bands, n rollouts
and 7 LLM leaves, a shared prefix cache computes about W + 7R (writing-first) or 7W + 7R/n (writing-last):
writing-last computes fewer when 6W < 7R(1 - 1/n), i.e. for writings shorter than about 1,900 characters with
the default tree at n = 8 (bench/reward_path.py prints both). Not the paper's: docs/fidelity.md, "Prompt layout"."""
WRITING_LAST_TEMPLATES: tuple[str, ...] = ("materials", "writing_last")
Messages = tuple[dict[str, str], ...]
PREFIXES_KEPT = 256  # writings whose rendered prefix is kept for their other leaves (a few MB at most)


class TemplateFolder:
    """The judge prompt templates of one folder, each loaded and compiled once, rendered with the context given.

    Why not `env.get_template(name).render(...)` per call: it checks the file's mtime and builds the context by
    walking a ChainMap of the globals twice every time (~20 us a render, three renders per judge call). Here a
    template is compiled on first use and its globals are copied once into a plain dict; the text rendered is
    the same (the same template, the same globals, `jinja2.StrictUndefined`). A template changed on disk during
    a run is not re-read: the run's `template_version` hashes were taken at its start anyway.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined, trim_blocks=True,
            lstrip_blocks=True, keep_trailing_newline=True, autoescape=False, auto_reload=False,
            # plain-text prompts; untrusted text is delimited and defused instead
        )
        self._loaded: dict[str, jinja2.Template] = {}

    def render(self, name: str, **context: Any) -> str:
        """`name`.j2 rendered; a broken or missing template is a JudgeError naming the file."""
        template = self._loaded.get(name)
        if template is None:
            template = self._load(name)
        try:
            return template.render(**context)
        except jinja2.TemplateError as exc:
            raise JudgeError(f"prompt template {self.folder / name}.j2: {exc}") from exc

    def load(self, names: tuple[str, ...]) -> None:
        """Compile these templates now: a missing or broken one is a JudgeError now, and their first renders
        (the first writings' calls) do not wait for jinja's compiler (~20 ms for a tree's templates)."""
        for name in names:
            if name not in self._loaded:
                self._load(name)

    def _load(self, name: str) -> jinja2.Template:
        path = self.folder / f"{name}.j2"
        if not path.is_file():
            raise JudgeError(f"prompt template {path} is missing")
        try:
            template = self.env.get_template(f"{name}.j2")
        except jinja2.TemplateError as exc:
            raise JudgeError(f"prompt template {path}: {exc}") from exc
        # a plain dict of the same globals: jinja walks this mapping twice per render, a ChainMap slowly
        template.globals = dict(template.globals)
        self._loaded[name] = template
        return template


def check_prompt_language(language: str) -> PromptLanguage:
    """`language` itself when it is a judge prompt language; else a JudgeError naming the choices."""
    if language not in PROMPT_LANGUAGES:
        raise JudgeError(f"prompt language must be one of {', '.join(PROMPT_LANGUAGES)}, not {language!r}")
    return language


def defuse(text: str) -> str:
    """Break any `<<<`/`>>>` run in untrusted text so it cannot close or fake our delimiters."""
    return text.replace("<<<", "< < <").replace(">>>", "> > >")


ANALYSIS = "analysis"
EXPLANATION = "explanation"
AUTHORS_MAX_TOKENS = 4096
"""The authors' judge budget per call (`code/config/settings.yaml`, `max_tokens`): our default for every judge call."""


def capped(schema: dict[str, Any], field: str, max_chars: int | None) -> dict[str, Any]:
    """The schema with `field` limited to `max_chars` characters (an option for tiny local judges; None: as is)."""
    if max_chars is None:
        return schema
    properties = {**schema["properties"], field: {**schema["properties"][field], "maxLength": max_chars}}
    return {**schema, "properties": properties}


def leaf_schema(leaf: Leaf, order: ReplyOrder = "analysis-first") -> dict[str, Any]:
    """Reply schema of one leaf: a free analysis (no length cap) and a score from the leaf's scale (an enum), in the
    order the authors' prompt for the trait asks (`Tree.reply_of`).

    Servers that constrain decoding emit properties in this order: analysis-first reasons before it scores,
    score-first scores as the authors' "Score: [[X]]" prompts do, the reason decoded after the score."""
    properties: dict[str, Any] = {ANALYSIS: {"type": "string"}, "score": {"type": "integer", "enum": list(leaf.scale)}}
    keys = [ANALYSIS, "score"] if order == "analysis-first" else ["score", ANALYSIS]
    return {
        "type": "object",
        "properties": {key: properties[key] for key in keys},
        "required": keys,
        "additionalProperties": False,
    }


def weights_schema(nodes: tuple[Node, ...]) -> dict[str, Any]:
    """Reply schema of the negotiator: {node id: {leaf id: number}} then a brief explanation (the authors' order).

    The range and the sum are checked by us (negotiator), not by the schema."""
    def group(node: Node) -> dict[str, Any]:
        ids = [leaf.id for leaf in node.leaves]
        return {"type": "object", "properties": {i: {"type": "number"} for i in ids}, "required": ids,
                "additionalProperties": False}

    properties: dict[str, Any] = {node.id: group(node) for node in nodes}
    properties[EXPLANATION] = {"type": "string"}
    return {
        "type": "object",
        "properties": properties,
        "required": [*(node.id for node in nodes), EXPLANATION],
        "additionalProperties": False,
    }


def weights_shape(nodes: tuple[Node, ...], language: str) -> str:
    """The reply shape shown to the negotiator: every key, `<weight>` placeholders, no number it could copy."""
    weight, why = ("<权重>", "<简要理由>") if language == "zh" else ("<weight>", "<brief explanation>")
    groups = [
        f'"{node.id}": {{' + ", ".join(f'"{leaf.id}": {weight}' for leaf in node.leaves) + "}" for node in nodes
    ]
    return "{" + ", ".join([*groups, f'"{EXPLANATION}": "{why}"']) + "}"


class Prompts:
    """Renders every judge prompt of one tree in one language, with or without the reference."""

    def __init__(
        self, tree: Tree, language: str = DEFAULT_PROMPT_LANGUAGE, *, with_reference: bool = True,
        prompts_dir: Path | None = None, leaf_layout: LeafLayout = DEFAULT_LEAF_LAYOUT,
    ) -> None:
        if leaf_layout not in LEAF_LAYOUTS:
            raise JudgeError(f"leaf_layout must be one of {', '.join(LEAF_LAYOUTS)}, not {leaf_layout!r}")
        self.leaf_layout = leaf_layout
        folder = (prompts_dir or PROMPTS_DIR) / check_prompt_language(language)
        if not folder.is_dir():
            raise JudgeError(f"no prompt templates for language {language!r} in {folder.parent}")
        self.tree, self.language, self.with_reference, self.folder = tree, language, with_reference, folder
        self.templates = TemplateFolder(folder)
        self._render = self.templates.render
        # rendered once, then reused (see `rubric` and `prefix`): a render is ~15-50 us, seven per writing
        self._rubrics: dict[tuple[int, bool], tuple[Leaf, str]] = {}
        self._prefixes: dict[tuple[str, str | None, str], str] = {}
        self._materials: dict[tuple[str, str | None], str] = {}  # writing-last: the instructions and reference
        # every template this tree renders, compiled when the judge is built (a server: before its first request)
        self.templates.load(self.template_names)

    @cached_property
    def template_names(self) -> tuple[str, ...]:
        leaf_templates = {leaf.template_name for n in self.tree.nodes for leaf in n.leaves if leaf.is_llm}
        layout = WRITING_LAST_TEMPLATES if self.leaf_layout == "writing-last" else ()
        return tuple(sorted({*SHARED_TEMPLATES, *layout, self.tree.system} | leaf_templates))

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
        if self.leaf_layout != DEFAULT_LEAF_LAYOUT:  # the default's hash (and so its cached calls) unchanged
            digest.update(f"leaf_layout={self.leaf_layout}\0".encode())
        return digest.hexdigest()

    @cached_property
    def _system(self) -> str:
        return self._render(self.tree.system)

    def system(self) -> str:
        """The tree's system prompt: the same for every leaf call and every writing (rendered once)."""
        return self._system

    def sees_reference(self, item: Item, leaf: Leaf | None = None) -> bool:
        """Whether a leaf's prompt shows the item's reference (None: the shared prefix of the anchored leaves)."""
        hidden = leaf is not None and leaf.reference == "hidden"
        return self.with_reference and bool(item.reference.strip()) and not hidden

    def prefix(self, item: Item, writing: str, *, reference: bool = True) -> str:
        """The part shared by the leaf calls on this writing (identical bytes for all leaves that see the reference).

        Rendered once per (instructions, reference shown, writing) — the whole of what it depends on — and kept for
        the other leaves of that writing (the last `PREFIXES_KEPT` kept)."""
        instruction, shown = item.task_prompt, item.reference if reference and self.sees_reference(item) else None
        key = (instruction, shown, writing)
        text = self._prefixes.get(key)
        if text is None:
            text = self._render("prefix", instruction=instruction, reference=defuse(shown or ""),
                                writing=defuse(writing))
            if len(self._prefixes) >= PREFIXES_KEPT:
                self._prefixes.pop(next(iter(self._prefixes)), None)  # the oldest
            self._prefixes[key] = text
        return text

    def rubric(self, leaf: Leaf, *, has_reference: bool) -> str:
        """The leaf-specific tail: criterion, bands, scale and reply format; rendered once per leaf and reference
        use (a leaf is frozen, and the tree and language are this object's)."""
        kept = self._rubrics.get((id(leaf), has_reference))
        if kept is not None and kept[0] is leaf:  # the same object: its id was not reused by another leaf
            return kept[1]
        text = self._render_rubric(leaf, has_reference)
        self._rubrics[(id(leaf), has_reference)] = (leaf, text)  # holding the leaf keeps its id from being reused
        return text

    def _render_rubric(self, leaf: Leaf, has_reference: bool) -> str:
        language = self.language
        return self._render(
            leaf.template_name,
            label=leaf.label.get(language),
            criteria=leaf.criteria.get(language).strip(),
            bands=[{"low": b.low, "high": b.high, "text": b.get(language)} for b in leaf.bands],
            scale=leaf.scale,
            anchored=has_reference and leaf.reference == "anchor",
            reference=has_reference,
            anchor=self.tree.reference_anchor,
            score_first=self.tree.reply_of(leaf) == "score-first",
        )

    def leaf_messages(self, item: Item, writing: str, leaf: Leaf) -> Messages:
        shown = self.sees_reference(item, leaf)
        if self.leaf_layout == "writing-last":
            user = self._writing_last(item, writing, leaf, shown)
        else:
            user = self.prefix(item, writing, reference=shown) + self.rubric(leaf, has_reference=shown)
        return ({"role": "system", "content": self.system()}, {"role": "user", "content": user})

    def _writing_last(self, item: Item, writing: str, leaf: Leaf, shown: bool) -> str:
        """The "writing-last" layout (`LEAF_LAYOUTS`): the instructions, the reference and the note on the writing's
        markers (`materials.j2`), the leaf's rubric (the default layout's words, reply format included), then the
        writing and one short closing line (`writing_last.j2`). Why everything but the writing before it: what
        follows the writing is computed again for every leaf call (~600 prompt tokens per sample less than the
        note and the format repeated after it)."""
        instruction, reference = item.task_prompt, item.reference if shown else None
        head = self._materials.get((instruction, reference))
        if head is None:
            head = self._render("materials", instruction=instruction, reference=defuse(reference or ""))
            if len(self._materials) >= PREFIXES_KEPT:
                self._materials.pop(next(iter(self._materials)), None)
            self._materials[(instruction, reference)] = head
        return head + self.rubric(leaf, has_reference=shown) + self._render("writing_last", writing=defuse(writing))

    def weights_messages(self, item: Item, nodes: tuple[Node, ...]) -> Messages:
        """The negotiator's prompt: rules, the writing instructions, each negotiated node's leaves, the reply shape."""
        views = [
            {
                "id": node.id,
                "label": node.label.get(self.language),
                "leaves": [
                    {"id": x.id, "label": x.label.get(self.language), "summary": x.summary_text(self.language)}
                    for x in node.leaves
                ],
            }
            for node in nodes
        ]
        user = self._render("weights", instruction=item.task_prompt, nodes=views,
                            shape=weights_shape(nodes, self.language))
        return ({"role": "user", "content": user},)
