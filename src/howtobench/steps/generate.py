"""The generate job (`howtobench generate`): the model under test writes the selected items into one output,
resumably, with its client from the step layer (live, or through the endpoint's batch API)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from howtobench.config import EndpointConfig
from howtobench.data.models import Item
from howtobench.generate import GenerateSettings, GenerateSummary, generate_writings, safe_file_stem
from howtobench.locks import output_lock
from howtobench.outputs import output_file
from howtobench.steps.client import step_client
from howtobench.steps.job_identity import JobIdentity, data_digest
from howtobench.steps.settings import Execution
from howtobench.steps.shards import Shard, write_sidecar


@dataclass(frozen=True)
class GenerateJob:
    """One `howtobench generate` run: the writer (None: the embedded local model), what it writes and where."""

    endpoint: EndpointConfig | None
    items: Sequence[Item]
    out_path: Path
    settings: GenerateSettings
    execution: Execution
    shard: Shard | None = None  # write only this shard's items (steps/shards.py)

    def shard_settings(self) -> dict[str, Any]:
        """What must be equal between the parts of a sharded generate job (`merge` checks it), and what a
        batch-files job asks (`job_identity`): the items by the digest of their content."""
        s = self.settings
        return {"model": s.model_name or (self.endpoint.model if self.endpoint else "local"),
                "sampling": s.sampling.model_dump(mode="json"), "system_prompt": s.system_prompt,
                "prompt_style": s.prompt_style, "prompt_language": s.prompt_language,
                "data": data_digest(self.items)}

    def execution_of(self, settings: dict[str, Any]) -> Execution:
        """The job's execution, its batch files (if any) keyed by what it asks: its settings and shard."""
        files = self.execution.files
        if files is None:
            return self.execution
        identity = JobIdentity.of({**settings, "shard": str(self.shard) if self.shard else None})
        return replace(self.execution, files=files.of(identity))


def generate_out_path(out: Path | None, settings: GenerateSettings, model: str) -> Path:
    """The output of a generate run: --out, else writings/<model name>.jsonl."""
    return out or Path("writings") / f"{safe_file_stem(settings.model_name or model)}.jsonl"


def generate_run_id(out_path: Path) -> str:
    """The call log's name for a generate command (`llm usage`), the same on every resume."""
    return f"generate:{out_path}"


async def generate_job(job: GenerateJob) -> GenerateSummary:
    """Write every item not yet in `job.out_path` (one process per output: the file is locked first)."""
    with output_lock(output_file(job.out_path)):  # before the file is read back: one process per output
        items = list(job.items)
        settings = job.shard_settings()
        if job.shard is not None:
            items = job.shard.pick(items, lambda item: item.id)
            write_sidecar(job.out_path, job.shard, "writings", settings, [it.id for it in job.items],
                          [(it.id,) for it in items])
        async with step_client(job.endpoint, job.execution_of(settings), purpose="writer",
                               run_id=generate_run_id(job.out_path), items=len(items), per_slot=1,
                               local_in_flight=None) as step:
            assert step.client is not None  # a writer always calls a model
            return await generate_writings(step.client, items, job.out_path, settings=job.settings,
                                           concurrency=step.in_flight, progress=job.execution.progress,
                                           max_failed_rate=job.execution.max_failed_rate)
