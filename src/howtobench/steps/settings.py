"""The settings every model-calling step shares: which work (`Selection`) and how its calls are answered
(`Execution`). Commands build them from their flags; `JudgeJob` and `RunSettings` hold them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from howtobench.llm.batch import BatchSettings
from howtobench.llm.client import CacheMode
from howtobench.steps.batch_files import BatchFiles


@dataclass(frozen=True)
class Selection:
    """The items (and writings) a step works on: the benchmark filters, their seed and the user's files."""

    data_dir: Path
    tasks: tuple[str, ...] | None = None
    genres: tuple[str, ...] | None = None
    models: tuple[str, ...] | None = None
    limit: int | None = None
    subset: int | None = None
    ids: tuple[str, ...] | None = None
    seed: int = 0
    writings: tuple[Path, ...] = ()
    strict: bool = False  # a bad --writings row stops the run (default: skipped and counted with file:line)


@dataclass(frozen=True)
class Execution:
    """How a step's model calls are answered and paced (no secrets: endpoints are passed beside it).

    `batch`: through the endpoint's batch API; `files`: from batch files of the user's engine; else live.
    `parallel`: writings in flight (None: the step's own rule, see `client.writings_in_flight`). `report`: where
    batch status lines go.
    """

    workspace: Path
    cache_mode: CacheMode = "on"
    prices: Path | None = None
    batch: BatchSettings | None = None
    preflight: bool = False
    parallel: int | None = None
    progress: bool = True
    max_failed_rate: float | None = None
    report: Callable[[str], None] | None = None
    files: BatchFiles | None = None  # exported batch files answer the calls (steps/batch_files.py)

    def __post_init__(self) -> None:
        """The bounds the flags check, for a caller that builds the settings in Python."""
        if self.parallel is not None and self.parallel < 1:
            raise ValueError(f"parallel must be at least 1 (got {self.parallel})")
        if self.max_failed_rate is not None and not 0.0 <= self.max_failed_rate <= 1.0:
            raise ValueError(f"max_failed_rate must be between 0 and 1 (got {self.max_failed_rate})")
