"""The guard's saved options of `run` (run_settings.RUN_OPTIONS): key, settings path, to YAML, from the flag.

Each is written to config.yaml only where it differs from the default (None: not written), as the flag takes it,
so a config.yaml read back through `--config` gives the same guard.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from howtobench.guard.guard import parse_guard_reward
from howtobench.guard.rules import parse_assignments, parse_thresholds


def _mode_yaml(mode: str) -> str | None:
    return None if mode == "off" else mode


def _reward_yaml(reward: float | str | None) -> str | float | None:
    return None if reward == "floor" else ("null" if reward is None else reward)


def _reward_flag(value: Any) -> float | str | None:
    return parse_guard_reward(str(value)) if value is not None else "floor"


def _pairs_yaml(values: dict[str, Any]) -> list[str] | None:
    return [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()] or None


def _path_yaml(value: Path | None) -> str | None:
    return None if value is None else str(value)


def _path_flag(value: Any) -> Path | None:
    return None if value is None else Path(value)


def guard_run_options() -> list[tuple[str, str, Callable[[Any], Any], Callable[[Any], Any]]]:
    """(key, settings path, to_yaml, from_flag) of each guard option of `run`."""
    return [
        ("guard", "guard.mode", _mode_yaml, lambda v: "off" if v is None else str(v)),
        ("guard_reward", "guard.reward", _reward_yaml, _reward_flag),
        ("guard_threshold", "guard.thresholds", _pairs_yaml, lambda v: parse_thresholds(list(v or []))),
        ("guard_action", "guard.actions", _pairs_yaml, lambda v: parse_assignments(list(v or []), "--guard-action")),
        ("guard_cliches", "guard.cliches", _path_yaml, _path_flag),
    ]
