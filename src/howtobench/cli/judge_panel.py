"""`--panel PANEL.yaml`: judge with a panel of judge endpoints (judges/panel.py), for `judge` and `run`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.judges.base import calls_a_model
from howtobench.judges.panel import PanelSpec, load_panel

PanelOpt = Annotated[Path | None, typer.Option(
    "--panel", help="Judge with a panel: a YAML file `judges: [{name, base_url, model, api_key_env, ...}]` (the "
    "keys of a config file's judge: section) and `aggregate: mean|median` of the judges' own roots; `missing: "
    "fail|available` says what a judge failing a writing does (fail, the default: the panel's judgment fails; "
    "available: scored over the judges left, counted). Each judgment keeps every judge's own under `panel`. "
    "Instead of --judge-base-url/--judge-model.")]


def panel_spec(path: Path | None, method: str, judge: EndpointConfig | None) -> PanelSpec | None:
    """The checked panel, or None without --panel; a panel with a single judge endpoint too, or with a method that
    calls no model, is a configuration error."""
    if path is None:
        return None
    if judge is not None:
        raise ConfigError("--panel names its judges' endpoints: give it instead of --judge-base-url/--judge-model "
                          "(or a config file's judge: section), not with them")
    if not calls_a_model(method):
        raise ConfigError(f"--panel needs a method that calls a judge model; {method} calls none")
    return load_panel(path)
