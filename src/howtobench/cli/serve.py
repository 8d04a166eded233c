"""`howtobench serve`: an HTTP scoring server for RL trainers (OpenRLHF's /get_reward, /v1/score, verl, TRL)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import GroupedCommand
from howtobench.config import resolve_data_dir
from howtobench.event_loop import run as run_async
from howtobench.judges.panel import PanelSpec
from howtobench.serve.server import DEFAULT_HOST, DEFAULT_PORT
from howtobench.serve.server import serve as serve_forever
from howtobench.serve.service import DEFAULT_DEADLINE_S, DEFAULT_MAX_QUEUED, GROUP_MEAN, FailedReward
from howtobench.serve.setup import ServeSettings

from .guard_options import SERVE_GUARD, ServeGuardFlags
from .judge import MethodOpt
from .judge_flags import AS_JUDGED, Judging
from .judge_panel import PanelOpt, panel_spec
from .options import (
    DataOpt,
    ModelFlags,
    model_flags,
)
from .params import CALL_FILES, JUDGE_ENDPOINT, bundled, flags, group_of

console = Console(stderr=True)


def parse_failed_reward(value: str | None) -> FailedReward:
    """--failed-reward: 'group-mean', 'none' (a null reward) or a finite number."""
    if value is None or value == GROUP_MEAN:
        return GROUP_MEAN
    if value == "none":
        return None
    try:
        number = float(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r}: give group-mean, none or a number") from None
    if not math.isfinite(number):
        raise typer.BadParameter(f"{value!r}: the substitute must be a finite number")
    return number


@dataclass(frozen=True)
class Server:
    """Where `serve` listens and how it answers, as its flags give it (each field is its flag, declared here
    and nowhere else)."""

    host: Annotated[str, typer.Option("--host", help="Address to listen on. Anything but loopback is announced "
                                      "with a warning: the server has no authentication.")] = DEFAULT_HOST
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port; 0 picks a free one (the URL is "
                                      "printed on its own line).")] = DEFAULT_PORT
    failed_reward: Annotated[str | None, typer.Option(
        "--failed-reward", callback=parse_failed_reward,
        help="What a failed sample's reward is (OpenRLHF and verl build tensors of the rewards and cannot take a "
        "null). group-mean: the mean of the judged rewards of its group (the samples of its instruction in flight "
        "with it), so its advantage under a group baseline is zero; a group with no judged sample gets 0 for every "
        "sample (zero advantage; OpenRLHF's dynamic filtering drops it). none: null with the reason (TRL takes it). "
        "A number: that number. Every answer says which samples were substituted and why.")] = GROUP_MEAN
    group_size: Annotated[int | None, typer.Option(
        "--group-size", min=1, help="Rollouts per prompt (GRPO's n): a failed sample's group-mean waits for all n "
        "of its group to be judged (at most 5 s for one that has not arrived), so the mean is the group's.")] = None
    max_queued: Annotated[int, typer.Option(
        "--max-queued", "--max-pending", min=1, help="Samples the server holds (queued or being judged), over all "
        "requests: ~9 KiB each for a 3,000-character response, 142 MiB at the default "
        "(bench/serve_queue_memory.py). Past it a request is answered 429 saying to raise it, unless nothing else "
        "is queued: one request larger than it is judged in parts, never refused.")] = DEFAULT_MAX_QUEUED
    deadline: Annotated[float, typer.Option(
        "--deadline", min=0.001, help="Seconds a request waits for its samples; a sample not judged by then gets "
        "null with the reason (its judgment goes on into the cache, so a re-sent request is answered from there). "
        "The default stays under OpenRLHF's 180 s client timeout.")] = DEFAULT_DEADLINE_S
    data: DataOpt = None

    def settings(self, flags: ModelFlags, method: str, judging: Judging, panel: PanelSpec | None) -> ServeSettings:
        """The server's settings: these flags, the judge endpoint and files (`flags`), the judge's options."""
        data_dir = resolve_data_dir(self.data) if self.data else None
        return ServeSettings(
            endpoint=flags.judge, workspace=flags.workspace, data_dir=data_dir, method=method,
            no_reference=judging.no_reference, failed_reward=self.failed_reward, max_queued=self.max_queued,
            deadline_s=self.deadline, group_size=self.group_size, cache_mode=flags.cache_mode,
            # with or without the reference is the request's label, not an option of the judges (ServeSettings)
            options=replace(judging, no_reference=False).options(method), preflight=flags.preflight, panel=panel)


LOOPBACK = Server()
"""The default of `serve`'s `server` parameter (what the flags' defaults make)."""


@flags(JUDGE_ENDPOINT, CALL_FILES, after="judge_max_tokens")
@bundled("server", Server)
@bundled("guard", ServeGuardFlags)
@bundled("judging", Judging, group_of(Judging, "tree", "no_reference", "renormalize", "prompt_language",
                                      "judge_max_tokens", "judge_option"))
def serve(server: Server = LOOPBACK, method: MethodOpt = "tow", judging: Judging = AS_JUDGED,
          panel: PanelOpt = None, guard: ServeGuardFlags = SERVE_GUARD) -> None:
    """Serve rewards over HTTP: POST /get_reward (OpenRLHF's remote reward contract), POST /v1/score (every node,
    leaf and reason), GET /health, GET /metrics (Prometheus).

    A label names the instruction a response answers: <task>/<infer_id> (a benchmark item, with its human
    reference), a JSON object with an instruction (and information, reference, task, genre, language), or nothing
    (reference-free, the prompt as the instruction). Every judge call is cached in the workspace, so a restarted
    server answers what it judged before without calling the judge. See docs/rl.md for the trainer recipes.
    """
    flags = model_flags()
    settings = replace(server.settings(flags, method, judging, panel_spec(panel, method, flags.judge)),
                       guard=guard.settings())
    run_async(serve_forever(settings, server.host, server.port, say=lambda line: console.print(
        line, highlight=False, markup=False, soft_wrap=True), announce=lambda url: print(url, flush=True)))


def register(app: typer.Typer) -> None:
    app.command("serve", cls=GroupedCommand)(serve)
