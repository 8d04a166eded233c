"""`python -m howtobench.llm.local_server [--extra-buffers on|off] ARGS`: llama-cpp-python's OpenAI-compatible
server with llama.cpp's *extra buffer types* off (by default) for the model it serves.

Why: llama.cpp repacks weights into "extra buffer types" chosen for the CPU (CPU_REPACK with AVX2 /
AVX-512 layouts, AMX tiles on Intel Sapphire Rapids and later). Its AMX buffer crashes (SIGSEGV on the
first completion) with Q4_K_M weights on some machines — ggml-org/llama.cpp issue 20824, the reason
dspy dropped the AMX variant from its CI — so the embedded model died on every AMX cloud VM. With
`use_extra_bufts = false` in the model parameters the same build answers normally on every x86-64 CPU.

Why at run time rather than a build flag (GGML_NATIVE=OFF, AMX off): a build flag only helps when pip
compiles llama-cpp-python here; a wheel from pip's cache or a prebuilt one keeps whatever it was built
with. `Llama(...)` does not expose `use_extra_bufts`, but it starts from
`llama_cpp.llama_model_default_params()`; wrapping that function before the server loads the model turns
the extra buffers off in every build — the same for `scripts/setup-env` and for a user's own
`pip install 'howtobench[local]'` + `howtobench llm serve-local`. The cost (measured by
`bench/local_repack.py`, figures in docs/local-model.md) is the speed those repacked layouts would have bought.
`--extra-buffers on` keeps llama.cpp's default (for measuring it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import llama_cpp.llama_cpp as llama_lib

FLAG = "--extra-buffers"


def without_extra_buffers(default: Callable[[], Any]) -> Callable[[], Any]:
    """`llama_model_default_params` with `use_extra_bufts` off: llama.cpp then neither repacks weights nor uses AMX."""

    def params() -> Any:
        model_params = default()
        model_params.use_extra_bufts = False
        return model_params

    return params


def disable_extra_buffers() -> None:
    """Make every `Llama` built after this call load its weights without extra buffer types."""
    fields = {name for name, *_ in llama_lib.llama_model_params._fields_}
    if "use_extra_bufts" not in fields:  # setting it would silently add a Python attribute that llama.cpp never sees
        raise SystemExit("this llama-cpp-python has no use_extra_bufts model parameter: "
                         "pip install --upgrade 'howtobench[local]'")
    llama_lib.llama_model_default_params = without_extra_buffers(llama_lib.llama_model_default_params)


def split_flag(argv: list[str]) -> tuple[bool, list[str]]:
    """(extra buffers wanted, the arguments for llama-cpp-python's server) from our command line."""
    if FLAG not in argv:
        return False, argv
    k = argv.index(FLAG)
    value = argv[k + 1] if k + 1 < len(argv) else ""
    if value not in ("on", "off"):
        raise SystemExit(f"{FLAG} takes on or off, not {value!r}")
    return value == "on", argv[:k] + argv[k + 2:]


def main() -> None:
    extra, rest = split_flag(sys.argv[1:])
    if not extra:
        disable_extra_buffers()
    from llama_cpp.server.__main__ import main as serve

    sys.argv = [sys.argv[0], *rest]
    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
