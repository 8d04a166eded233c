"""Typed records at the data boundary: an Item (one benchmark instruction) and a Writing.

Field names follow the public release (`infer_id`, `basic_instruction`, `information`,
`reference`, `output`) through aliases, so release files load unchanged and our own
outputs can be written back in the release layout.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TASKS: tuple[str, ...] = ("completion", "guide", "open")
Task = Literal["completion", "guide", "open"]
Language = Literal["zh", "en"]


class Item(BaseModel):
    """One writing instruction with its grounding information and human reference."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    id: str = Field(alias="infer_id")
    bench_id: str = ""
    task: Task = Field(alias="task_type")
    sub_task: str = ""
    genre: str = "others"
    instruction: str = Field(alias="basic_instruction")
    information: str = ""
    reference: str = ""
    language: Language = "zh"
    reference_source: str = "human"
    """Who wrote `reference`: "human" (the release's expert reference) or a model's writing put in its place
    (`--reference-from`, Appendix B.3: "model:NAME" or "file:NAME")."""

    @property
    def task_prompt(self) -> str:
        """`basic_instruction` and `information` joined by a blank line, exactly as the release gives them.

        This is what the paper's ten models were asked (the release records their task as these two fields)
        and what the authors' judges read as the "writing instructions" (`evaluation/pipeline.py`): no
        stripping, no framing; an empty `information` (Open) leaves the instruction alone.
        """
        return f"{self.instruction}\n\n{self.information}" if self.information else self.instruction

    def release_row(self) -> dict[str, Any]:
        """The item as a line of the release's `aligned.jsonl`."""
        return {
            "infer_id": self.id,
            "bench_id": self.bench_id,
            "task_type": self.task,
            "sub_task": self.sub_task,
            "basic_instruction": self.instruction,
            "information": self.information,
            "reference": self.reference,
        }


class Writing(BaseModel):
    """One text written by one model for one item. An empty `output` is kept, never dropped."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="allow")

    item_id: str = Field(alias="infer_id")
    model: str
    output: str = ""
    truncated: bool = False  # the server stopped the model (max_tokens, content filter) before it finished

    @property
    def is_empty(self) -> bool:
        return not self.output.strip()
