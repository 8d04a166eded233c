"""Stand-ins for the GPU-only modules the trainers import at module level (flash-attn's kernels, vLLM's engine):
what the code under test calls of them is never reached on the CPU path these tests run. Installed only when the
real module is absent."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    module.__spec__ = importlib.util.spec_from_loader(name, loader=None)
    sys.modules[name] = module
    return module


def _unavailable(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("a GPU kernel was called in a CPU test")


@dataclass
class SamplingParams:
    """vllm.SamplingParams as OpenRLHF builds it (keyword fields only)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int | None = None
    min_tokens: int = 0
    skip_special_tokens: bool = True
    logprobs: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@contextmanager
def installed() -> Iterator[None]:
    """The stand-ins while the trainer's modules are imported, removed after (so that another library's "is vLLM
    installed?" check does not find them)."""
    before = set(sys.modules)
    install()
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n not in before and n.split(".")[0] in ("vllm", "flash_attn")]:
            del sys.modules[name]


def install() -> None:
    if importlib.util.find_spec("flash_attn") is None:
        _module("flash_attn")
        _module("flash_attn.bert_padding", index_first_axis=_unavailable, pad_input=_unavailable,
                rearrange=_unavailable, unpad_input=_unavailable)
        _module("flash_attn.utils")
        _module("flash_attn.utils.distributed", all_gather=_unavailable)
    if importlib.util.find_spec("vllm") is None:
        _module("vllm", SamplingParams=SamplingParams, LLM=object, __path__=[])
        _module("vllm.inputs", TokensPrompt=dict)
        _module("vllm.utils", random_uuid=lambda: "0")
