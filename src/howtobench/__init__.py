"""howtobench: the HoWToBench writing benchmark and the Tree-of-Writing judge."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "ascore", "score"]


def __getattr__(name: str) -> Any:
    """`howtobench.score` / `howtobench.ascore`, imported on first use so `import howtobench` stays light."""
    if name in ("score", "ascore"):
        from howtobench import api

        return getattr(api, name)
    raise AttributeError(f"module 'howtobench' has no attribute {name!r}")
