"""Tree-of-Writing specs as data: nodes, leaves, scorer kinds, scales, aggregation (section 3.1-3.3).

A tree is a YAML file validated into frozen pydantic models, so a user adds a leaf, changes a scale or
translates the criteria by editing a file. The code only knows the scorer *kinds*, registered in `LEAF_KINDS`
(`register_leaf_kind` adds one, an installed package through the `howtobench.leaf_kinds` entry points; a leaf
naming an unregistered kind is refused with the known ones):

    llm-rubric      an LLM scores 1-10 against the reference (anchored at `reference_anchor`)
    llm-step        an LLM scores 1-10 against the reference like a rubric, and `mapping` steps the answer
                    (the authors' plots leaf: 1-3 -> 0, 4-7 -> 5, 8-10 -> 10)
    llm-scale       an LLM picks a raw level (e.g. 1-3) that `mapping` projects (y = 5(x - 1) -> 0 / 5 / 10)
    llm-impression  an LLM gives the overall impression 1-10
    regex-headings  deterministic: the heading parser and the Formatting rule (`judges.headings`)

Each leaf's `scale` is the explicit list of values the judge may answer; it becomes an enum in the
reply schema, so grammar-constrained servers cannot leave it. A leaf's `criteria` is the full list of
what its expert looks at, `bands` the meaning of its score ranges, `summary` the one line the weight
negotiator reads, and `reference` how the leaf uses the human reference: "anchor" (fixed at
`reference_anchor`, the bands compare with it), "shown" (shown for comparison, no fixed value: the authors'
impression) or "hidden" (not shown: the authors' paragraphing). A leaf's `reply` says what its reply gives
first, as the authors' prompt for that trait asks: "analysis-first" or "score-first" (the score, then a brief
reason); `Tree.reply_order: analysis-first` overrides every leaf (the named tree `analysis-first`).
`Tree.system` names the system-prompt template (`system`: the paper's judge; `system_debiased`: the named
length-debiased variant).
A tree file may start from another with `base: NAME` and override top-level keys (`trees/debiased.yaml`).
`Tree.hash` is the sha256 of the canonical JSON of the spec and is written into every judgment.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from howtobench.config import yaml_problem
from howtobench.data.models import TASKS, Task
from howtobench.errors import JudgeError
from howtobench.judges.headings import score_formatting
from howtobench.registry import Registry
from howtobench.suggest import unknown_name


@dataclass(frozen=True)
class LeafKind:
    """A scorer kind, as the tree and the judge ask it: an LLM kind renders `template` (unless the leaf names its
    own) and asks the judge model; a deterministic kind scores the writing's text with `score` (-> raw, reason).
    `mapped`: raw answers are projected by the leaf's `mapping`. `must_allow`: values its scale has to include."""

    name: str
    template: str | None = None
    mapped: bool = False
    score: Callable[[str], tuple[int, str]] | None = None
    must_allow: frozenset[int] = frozenset()

    @property
    def calls_model(self) -> bool:
        return self.score is None


LEAF_KINDS: Registry[LeafKind] = Registry("leaf kind")
"""The scorer kinds tree specs may name: this module's, then the installed `howtobench.leaf_kinds` entry points
(howtobench.registry). ValueError for an unknown or twice-registered kind: a tree's validator reports it."""


def register_leaf_kind(kind: LeafKind) -> LeafKind:
    """Add a scorer kind that tree specs may name (`kind: NAME`); a name another module registered is refused."""
    return LEAF_KINDS.register(kind.name, kind, origin=sys._getframe(1).f_globals.get("__name__", "?"))


for _kind in (LeafKind("llm-rubric", "rubric"), LeafKind("llm-step", "rubric", mapped=True),
              LeafKind("llm-scale", "scale", mapped=True), LeafKind("llm-impression", "impression"),
              LeafKind("regex-headings", score=score_formatting, must_allow=frozenset({0, 5, 10}))):
    register_leaf_kind(_kind)
ReferenceUse = Literal["anchor", "shown", "hidden"]
ReplyOrder = Literal["analysis-first", "score-first"]
TreeReplyOrder = Literal["per-leaf", "analysis-first"]
Aggregation = Literal["negotiated", "mean", "single"]
TREES_DIR = Path(__file__).parent / "trees"
SPEC_NAME = r"^[a-z][a-z0-9_]*$"
Name = Annotated[str, Field(pattern=SPEC_NAME)]
"""An id or template name in a spec file: lower-case words joined by underscores (it becomes a reply key)."""


class Spec(BaseModel):
    """A part of a spec file (a tree, a rubric): immutable once read, and an unknown key is refused, so a misspelt
    key is an error instead of a silently ignored line."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Text(Spec):
    """A text in every prompt language (HoWToBench is Chinese; English serves other benchmarks)."""

    zh: str
    en: str

    def get(self, language: str) -> str:
        return self.en if language == "en" else self.zh


class Band(Text):
    """What a range of raw scores means (e.g. 1-2: much weaker than the reference on nearly every criterion): a text
    in every prompt language, for the scores `low` to `high`."""

    low: int
    high: int


class Leaf(Spec):
    """One scored trait."""

    id: Name
    label: Text
    summary: Text | None = Field(default=None, description="One line for the weight negotiator; default: label.")
    criteria: Text
    bands: tuple[Band, ...] = ()
    kind: str
    reference: ReferenceUse = "anchor"
    reply: ReplyOrder = Field(default="analysis-first", description="What the reply gives first: the analysis, or "
                              "the score (then a brief reason), as the authors' prompt for this trait asks.")
    template: str | None = Field(default=None, description="Rubric template name; default: the kind's template.")
    scale: tuple[int, ...] = Field(min_length=2)
    mapping: dict[int, float] | None = Field(default=None, description="Raw answer -> leaf score (step / scale).")

    @model_validator(mode="after")
    def _check_scale(self) -> Leaf:
        kind = LEAF_KINDS.lookup(self.kind, what=f"scorer kind of leaf {self.id}:")
        if len(set(self.scale)) != len(self.scale):
            raise ValueError(f"leaf {self.id}: scale values repeat: {list(self.scale)}")
        if kind.mapped and self.mapping is None:
            raise ValueError(f"leaf {self.id}: an {self.kind} leaf needs a mapping from its raw values to scores")
        for band in self.bands:
            if band.low > band.high or band.low not in self.scale or band.high not in self.scale:
                raise ValueError(f"leaf {self.id}: band {band.low}-{band.high} is not a range of {list(self.scale)}")
        if self.mapping is not None and set(self.mapping) != set(self.scale):
            keys = sorted(self.mapping)
            raise ValueError(f"leaf {self.id}: mapping keys {keys} must equal the scale {list(self.scale)}")
        if not set(self.scale) >= kind.must_allow:
            allowed = ", ".join(map(str, sorted(kind.must_allow)))
            raise ValueError(f"leaf {self.id}: a {self.kind} leaf must allow {allowed}")
        return self

    @property
    def scorer(self) -> LeafKind:
        return LEAF_KINDS[self.kind]

    @property
    def is_llm(self) -> bool:
        return self.scorer.calls_model

    @property
    def template_name(self) -> str:
        """The rubric template rendered after the shared prefix."""
        return self.template or self.scorer.template or self.kind.removeprefix("llm-")

    def summary_text(self, language: str) -> str:
        return (self.summary or self.label).get(language)

    def score_of(self, raw: int) -> float:
        """The leaf score of an allowed raw answer (mapped for llm-scale leaves)."""
        if raw not in self.scale:
            raise JudgeError(f"leaf {self.id}: {raw} is not one of {list(self.scale)}")
        return float(self.mapping[raw]) if self.mapping is not None else float(raw)

    @property
    def lowest(self) -> tuple[int, float]:
        """(raw, score) of the worst answer: what an empty writing gets without a call."""
        raw = min(self.scale, key=self.score_of)
        return raw, self.score_of(raw)


class Node(Spec):
    """A primary node (Content, Format, Impression) and how its leaves aggregate."""

    id: Name
    label: Text
    aggregation: Aggregation
    tasks: tuple[Task, ...] = TASKS  # type: ignore[assignment]  # TASKS holds exactly the Task values
    leaves: tuple[Leaf, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_single(self) -> Node:
        if self.aggregation == "single" and len(self.leaves) != 1:
            raise ValueError(f"node {self.id}: aggregation 'single' needs exactly one leaf, has {len(self.leaves)}")
        return self

    @property
    def negotiated(self) -> bool:
        """Whether J_W negotiates this node's edge weights (a single leaf always has weight 1)."""
        return self.aggregation == "negotiated" and len(self.leaves) > 1


class Tree(Spec):
    """A whole ToW tree: root -> nodes -> leaves; the root averages nodes weighted by their leaf counts."""

    name: str
    description: str = ""
    reference_anchor: int = Field(default=6, ge=1, le=10)
    system: str = Field(default="system", pattern=SPEC_NAME, description="System-prompt template name.")
    reply_order: TreeReplyOrder = Field(default="per-leaf", description="per-leaf: each leaf's own `reply` (the "
                                        "authors' order); analysis-first: every leaf reasons before it scores.")
    nodes: tuple[Node, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_unique(self) -> Tree:
        for what, ids in (("node", [n.id for n in self.nodes]), ("leaf", [x.id for n in self.nodes for x in n.leaves])):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"{what} ids must be unique; repeated: {duplicates}")
        return self

    def reply_of(self, leaf: Leaf) -> ReplyOrder:
        """The order the leaf's reply is asked in: its own, unless the tree puts the analysis first everywhere."""
        return "analysis-first" if self.reply_order == "analysis-first" else leaf.reply

    @cached_property
    def node_ids(self) -> dict[str, str]:
        """The id of the node each leaf id hangs under (leaf ids are unique in a tree): looked up once per leaf
        call, where a search comparing the frozen leaf models field by field cost ~20 us."""
        return {leaf.id: node.id for node in self.nodes for leaf in node.leaves}

    def nodes_for(self, task: str) -> tuple[Node, ...]:
        """The nodes that apply to a task (Completion has no Format node in the default tree)."""
        return tuple(n for n in self.nodes if task in n.tasks)

    def leaves_for(self, task: str) -> tuple[Leaf, ...]:
        return tuple(leaf for n in self.nodes_for(task) for leaf in n.leaves)

    def negotiated_nodes(self, task: str | None = None) -> tuple[Node, ...]:
        nodes = self.nodes if task is None else self.nodes_for(task)
        return tuple(n for n in nodes if n.negotiated)

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @cached_property
    def hash(self) -> str:
        """sha256 of the canonical spec: any change of a leaf, scale or criterion changes it."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()


def _tree_path(source: str | Path) -> Path:
    path = Path(source)
    return TREES_DIR / f"{source}.yaml" if not path.suffix else path


def _read_spec(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The YAML mapping of a tree file, with `base: NAME` resolved (the base's keys, overridden by this file's)."""
    if path in seen:
        raise JudgeError(f"tree spec {path}: `base` chain loops back to itself")
    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgeError(f"no tree spec file {path}") from None
    except OSError as exc:
        raise JudgeError(f"cannot read tree spec {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise JudgeError(f"tree spec {yaml_problem(exc, path)}") from exc
    if not isinstance(spec, dict):
        raise JudgeError(f"invalid tree spec {path}: not a mapping")
    base = spec.pop("base", None)
    if base is None:
        return spec
    base_path = _tree_path(base) if not Path(str(base)).suffix else path.parent / str(base)
    return {**_read_spec(base_path, (*seen, path)), **spec}


def load_tree(source: str | Path = "default") -> Tree:
    """A tree from a YAML file path, or a bundled tree by name (`default`, `debiased`)."""
    path = _tree_path(source)
    if not Path(source).suffix and not path.is_file():
        bundled = sorted(p.stem for p in TREES_DIR.glob("*.yaml"))
        raise JudgeError(f"{unknown_name('tree', str(source), bundled)} (or the path of a tree YAML file)")
    spec = _read_spec(path)
    try:
        return Tree.model_validate(spec)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"]) or "spec"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise JudgeError(f"invalid tree spec {path}: {where}: {err['msg']}{more}") from exc


def default_tree() -> Tree:
    """The paper's tree (section 3, Figure 1, Appendix M)."""
    return load_tree("default")
