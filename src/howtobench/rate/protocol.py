"""What a rater answers, and the server's rules for accepting it (paper section 5.2, Appendix J).

Two study modes:

    metaeditor  the paper's MetaEditor protocol: every writing of one instruction is shown to one rater as
                anonymous responses A, B, C...; each gets a score of 1-5 with the human reference as the
                4-point anchor; a score below 3 needs at least one error type from the paper's penalty list
                (Appendix J); a safety issue or an ignored instruction means a score of 1.
    tow         the Tree-of-Writing leaves of the item's task, each on its own scale with its criteria
                shown, plus an overall score of 1-10 with the reference at the tree's anchor (6).

A rating may be saved before it is complete (a comment typed before the score, a ToW rating filled leaf
by leaf), so nothing a rater typed is lost; only complete ratings are exported. A value outside its scale
or a broken rule is refused (`RatingRefused`), whatever the page let through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from howtobench.judges.tree import Leaf, Text, Tree

Mode = Literal["metaeditor", "tow"]
MODES: tuple[str, ...] = ("metaeditor", "tow")

METAEDITOR_SCALE: tuple[int, ...] = (1, 2, 3, 4, 5)
METAEDITOR_ANCHOR = 4
"""The human reference is a 4 on the 1-5 scale (Appendix J)."""
PASSING_SCORE = 3
"""Below this a response has a penalty item, so an error type is required (Appendix J)."""
TOW_OVERALL_SCALE: tuple[int, ...] = tuple(range(1, 11))
MAX_COMMENT = 4000


@dataclass(frozen=True)
class ErrorType:
    """One penalty item of Appendix J; `forces_one` ones mean the response scores 1 whatever else it does."""

    id: str
    label: Text
    forces_one: bool = False


ERROR_TYPES: tuple[ErrorType, ...] = (
    ErrorType("format_inconsistent", Text(zh="格式与上下文不一致", en="Format does not fit the context")),
    ErrorType(
        "content_inconsistent",
        Text(zh="内容不一致（视角/叙述者、逻辑、风格或语气）",
             en="Content inconsistent (viewpoint or narrator, logic, style or tone)"),
    ),
    ErrorType("repeats_context", Text(zh="重复了给定的上下文", en="Repeats the given context")),
    ErrorType("factual_error", Text(zh="事实错误", en="Factual error")),
    ErrorType("empty_repetition", Text(zh="无意义的重复", en="Repetition that adds nothing")),
    ErrorType("mixed_language", Text(zh="语言混杂", en="Mixed languages")),
    ErrorType("stray_symbols", Text(zh="不当的符号、标记或编号", en="Stray symbols, tags or numbering")),
    ErrorType("instruction_ignored", Text(zh="未遵循写作指令", en="Instruction not followed"), forces_one=True),
    ErrorType("safety", Text(zh="安全问题（暴力、低俗、辱骂等）", en="Safety issue (violent, obscene, abusive...)"),
              forces_one=True),
)
ERROR_IDS: dict[str, ErrorType] = {e.id: e for e in ERROR_TYPES}

SCORE_BANDS: tuple[tuple[int, Text], ...] = (
    (5, Text(zh="优于参考答案，且没有扣分项", en="Better than the reference, no penalty item")),
    (4, Text(zh="与参考答案水平相当，且没有扣分项", en="As good as the reference, no penalty item")),
    (3, Text(zh="没有扣分项，但不如参考答案", en="No penalty item, but weaker than the reference")),
    (2, Text(zh="有一到两个扣分项（须选错误类型）", en="One or two penalty items (choose the error types)")),
    (1, Text(zh="两个以上扣分项，或有安全问题、未遵循指令（须选错误类型）",
             en="More than two penalty items, a safety issue or the instruction ignored (choose the error types)")),
)
"""The 1-5 bands of Appendix J, in our words, shown next to every MetaEditor response."""


class RatingRefused(ValueError):
    """A submitted rating breaks the scale or the protocol; the message is shown to the rater."""


@dataclass(frozen=True)
class Rating:
    """One rater's answer about one response, as stored. `dims` holds raw ToW leaf answers."""

    score: int | None
    dims: dict[str, int] = field(default_factory=dict)
    error_types: tuple[str, ...] = ()
    comment: str = ""


@dataclass(frozen=True)
class Protocol:
    """The rules of one study: its mode and, for `tow`, the tree whose leaves are rated."""

    mode: Mode
    tree: Tree | None = None

    def leaves(self, task: str) -> tuple[Leaf, ...]:
        """The leaves a rater scores for an item of this task (none in MetaEditor mode)."""
        return self.tree.leaves_for(task) if self.mode == "tow" and self.tree is not None else ()

    @property
    def scale(self) -> tuple[int, ...]:
        return METAEDITOR_SCALE if self.mode == "metaeditor" else TOW_OVERALL_SCALE

    @property
    def anchor(self) -> int:
        """The score the human reference stands for."""
        if self.mode == "metaeditor" or self.tree is None:
            return METAEDITOR_ANCHOR
        return self.tree.reference_anchor

    def check(self, task: str, payload: Mapping[str, Any]) -> Rating:
        """The rating a request body asks to save, or `RatingRefused` naming the first broken rule."""
        unknown = sorted(set(payload) - {"score", "dims", "error_types", "comment"})
        if unknown:
            raise RatingRefused(f"unknown field {unknown[0]!r}")
        score = _optional_int(payload.get("score"), "score")
        if score is not None and score not in self.scale:
            raise RatingRefused(f"score {score} is outside the scale {self.scale[0]}-{self.scale[-1]}")
        rating = Rating(
            score=score,
            dims=self._check_dims(task, payload.get("dims")),
            error_types=self._check_errors(score, payload.get("error_types")),
            comment=_check_comment(payload.get("comment")),
        )
        return rating

    def is_complete(self, task: str, rating: Rating) -> bool:
        """Whether a saved rating counts (is exported): a score, and in ToW mode every leaf of the task."""
        return rating.score is not None and all(leaf.id in rating.dims for leaf in self.leaves(task))

    def _check_dims(self, task: str, raw: Any) -> dict[str, int]:
        if raw in (None, {}):
            return {}
        if self.mode != "tow":
            raise RatingRefused("leaf scores belong to ToW studies; this study rates one overall score")
        if not isinstance(raw, dict):
            raise RatingRefused("dims must be an object of leaf id -> score")
        leaves = {leaf.id: leaf for leaf in self.leaves(task)}
        out: dict[str, int] = {}
        for leaf_id, value in raw.items():
            if leaf_id not in leaves:
                raise RatingRefused(f"{leaf_id!r} is not a leaf rated for the {task} task")
            number = _optional_int(value, leaf_id)
            if number is None:
                continue
            if number not in leaves[leaf_id].scale:
                raise RatingRefused(f"{leaf_id} {number} is not one of {list(leaves[leaf_id].scale)}")
            out[leaf_id] = number
        return out

    def _check_errors(self, score: int | None, raw: Any) -> tuple[str, ...]:
        chosen = _string_list(raw, "error_types")
        if self.mode != "metaeditor":
            if chosen:
                raise RatingRefused("error types belong to MetaEditor studies")
            return ()
        unknown = [e for e in chosen if e not in ERROR_IDS]
        if unknown:
            raise RatingRefused(f"unknown error type {unknown[0]!r}")
        if score is None:
            return tuple(chosen)
        if score < PASSING_SCORE and not chosen:
            raise RatingRefused(f"a score below {PASSING_SCORE} needs at least one error type")
        if score >= PASSING_SCORE and chosen:
            raise RatingRefused(f"an error type means a penalty, so the score must be below {PASSING_SCORE}")
        forcing = [e for e in chosen if ERROR_IDS[e].forces_one]
        if forcing and score != 1:
            raise RatingRefused(f"{ERROR_IDS[forcing[0]].label.en.lower()} means a score of 1")
        return tuple(dict.fromkeys(chosen))


def _optional_int(value: Any, what: str) -> int | None:
    """An integer answer (JSON number or digit string); None or '' means not answered yet."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise RatingRefused(f"{what} must be a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise RatingRefused(f"{what} must be a whole number, got {value!r}")


def _string_list(raw: Any, what: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not all(isinstance(x, str) for x in raw):
        raise RatingRefused(f"{what} must be a list of strings")
    return [x for x in raw if x]


def _check_comment(raw: Any) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise RatingRefused("comment must be text")
    if len(raw) > MAX_COMMENT:
        raise RatingRefused(f"comment is longer than {MAX_COMMENT} characters")
    return raw.strip()
