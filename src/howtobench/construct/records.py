"""The rows of each stage file. A failed model call is a row with `ok=False` and the error, never a guess."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from howtobench.data.models import Language, Task


class SourceText(BaseModel):
    """One human-written text after ingest; `source` and `license` travel with it to the benchmark."""

    model_config = ConfigDict(extra="forbid")

    text_id: str
    text: str
    source: str
    license: str = ""
    language: Language
    chars: int


class Classified(BaseModel):
    """The genre the classifier gave a text. Users may edit `genre` before the next step."""

    model_config = ConfigDict(extra="ignore")

    text_id: str
    source: str
    language: Language
    genre: str | None = None
    reason: str = ""
    ok: bool = False
    error: str | None = None
    preview: str = ""


class Rated(BaseModel):
    """The coarse quality score of a text (1-5) and whether it passed the threshold."""

    model_config = ConfigDict(extra="ignore")

    text_id: str
    source: str
    genre: str
    language: Language
    score: int | None = Field(default=None, ge=1, le=5)
    reason: str = ""
    ok: bool = False
    error: str | None = None
    kept: bool = False


class DraftItem(BaseModel):
    """One benchmark item made from a text; `summary`/`theme` are the back-constructed S and T."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    bench_id: str
    text_id: str
    task: Task
    genre: str
    language: Language
    source: str
    license: str = ""
    instruction: str = ""
    information: str = ""
    reference: str = ""
    summary: str = ""
    theme: str = ""
    ok: bool = False
    error: str | None = None


class ReviewItem(DraftItem):
    """A draft item as the reviewer sees it: `keep=false` drops it, `note` records why (4.6, App. G)."""

    model_config = ConfigDict(extra="forbid")

    keep: bool = True
    note: str = ""
