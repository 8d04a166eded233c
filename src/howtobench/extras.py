"""The optional parts of the toolkit and the extra that installs each, so the core install stays what `serve`
and the RL adapters need (issue 36): a command that needs a missing part stops with one line naming the extra.

    plots     matplotlib and mplfonts (its CJK font): the figures of `analyze ... --out` and `meta ... --out`
    metrics   jieba and sacrebleu: the overlap metrics (`--method bleu / rouge / sacrebleu`)

Only the command that needs the part imports it, so every other command (and `howtobench --help`) works without.
"""

from __future__ import annotations

import importlib.util

from howtobench.errors import ConfigError

EXTRAS: dict[str, tuple[str, ...]] = {
    "plots": ("matplotlib",),
    "metrics": ("jieba", "sacrebleu"),
}
"""Each extra and the modules whose absence means it is not installed (pyproject.toml's optional-dependencies)."""


class MissingExtra(ConfigError):
    """A command needs an optional part that is not installed: one line, exit status 2, the install to run."""


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here."""
    return [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def require(extra: str, what: str) -> None:
    """Stop with one line when `extra` is not installed: `what` needs it (e.g. "--method bleu")."""
    if gone := missing(extra):
        raise MissingExtra(f"{what} needs the [{extra}] extra ({', '.join(gone)} missing): "
                           f"pip install 'howtobench[{extra}]'")
