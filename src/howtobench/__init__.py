"""howtobench: the HoWToBench writing benchmark and the Tree-of-Writing judge.

    import howtobench
    judge = howtobench.EndpointConfig(model="gpt-4o", base_url="https://api.openai.com/v1",
                                      api_key_env="OPENAI_API_KEY")
    result = howtobench.score("写一封感谢信", "……", judge=judge)   # or: await howtobench.ascore(...)
    result.score, result.leaves
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from howtobench.version import __version__

__all__ = ["EndpointConfig", "__version__", "ascore", "score"]

if TYPE_CHECKING:
    from howtobench.api import ascore, score
    from howtobench.config import EndpointConfig

_LAZY = {"score": "howtobench.api", "ascore": "howtobench.api", "EndpointConfig": "howtobench.config"}


def __getattr__(name: str) -> Any:
    """The public API, imported on first use so `import howtobench` stays light."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'howtobench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
