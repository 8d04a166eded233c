"""`--config FILE`: a YAML file of option defaults, checked against the command that reads it.

Keys are the command's option names (`judge_model`, `judge_concurrency`, `format`, ...; a dash may stand for
the underscore), optionally grouped in `writer:` and `judge:` sections whose keys are the endpoint settings
without their prefix:

    judge:
      base_url: https://api.openai.com/v1
      model: gpt-4o-2024-11-20
      api_key_env: OPENAI_API_KEY
      use_max_completion_tokens: true
    subset: 24

The file becomes click's `default_map` before any other option is read, so a flag on the command line still
wins and every value goes through the same type checks as the flag. A key that no command knows is an error
naming it (with a did-you-mean); a key another command takes (a shared file, or a run's config.yaml given to
`judge`) is left for that command. `runs/<name>/config.yaml` is written in this shape, so
`howtobench run --config runs/<name>/config.yaml` repeats that run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from howtobench.config import load_config_file
from howtobench.errors import ConfigError
from howtobench.suggest import did_you_mean

SECTIONS = {"writer": "", "judge": "judge_"}
# Names of EndpointConfig fields that differ from their flag (so a dumped EndpointConfig reads back).
FIELD_ALIASES = {"base_urls": "base_url", "timeout_s": "timeout"}


def flatten(raw: dict[str, Any], origin: str) -> dict[str, Any]:
    """`writer:` / `judge:` sections spread into prefixed keys; dashes become underscores."""
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        name = _key_name(key, origin)
        if name in SECTIONS and isinstance(value, dict):
            for sub, sub_value in value.items():
                sub_name = _key_name(sub, origin)
                flat[SECTIONS[name] + FIELD_ALIASES.get(sub_name, sub_name)] = sub_value
        elif name in SECTIONS and value is not None:
            raise ConfigError(f"{origin}: `{name}:` must be a section of endpoint settings (base_url, model, ...)")
        elif name not in SECTIONS:
            flat[name] = value
    return flat


def _key_name(key: Any, origin: str) -> str:
    """A key as an option name; YAML 1.1 reads an unquoted `yes:` / `no:` / `on:` / `off:` as a boolean, which the
    error names as the user wrote it rather than as Python's `True`."""
    if isinstance(key, bool):
        words = "yes, on or true" if key else "no, off or false"
        raise ConfigError(f"{origin}: a key written {words} reads as a YAML boolean, not a name: quote it "
                          f"(\"yes\": true for --yes)")
    return str(key).replace("-", "_")


# Commands, parameters and contexts are click's (typer may vendor its own copy of click): read by duck typing.
Command = Any
Param = Any


def option_keys(command: Command) -> dict[str, Param]:
    """Every name a config key may use for the command's options: parameter names and long flag names."""
    keys: dict[str, Param] = {}
    for param in command.params:
        if param.param_type_name != "option" or param.name in (None, "config", "help"):
            continue
        keys[param.name] = param
        for opt in param.opts:
            if opt.startswith("--"):
                keys[opt[2:].replace("-", "_")] = param
    return keys


def _all_option_keys(root: Any) -> set[str]:
    """Option keys of every command under the root context's group (loads them all: only reached when a key is
    not this command's). The root comes from click's context, so this module needs no import of the app."""
    keys: set[str] = set()
    pending: list[Command] = [root.command]
    while pending:
        command = pending.pop()
        keys |= set(option_keys(command))
        if hasattr(command, "list_commands"):
            pending += [c for name in command.list_commands(root) if (c := command.get_command(root, name))]
    return keys


def _check_number(path: Path, key: str, param: Param, value: Any) -> None:
    """A number option's value is a number: YAML's `yes` / `true` is a boolean, which click would take as 1
    (`concurrency: yes` was one call at once); `.nan` / `.inf` are caught by each option's bounds."""
    # (concurrency takes "auto" too, so its option is a string: a boolean there is still a number written wrong)
    if isinstance(value, bool) and (_takes_a_number(param) or str(param.name).endswith("concurrency")):
        written = section_keys(load_config_file(path)).get(key)
        shown = f"{written[1]} under {written[0]}:" if written else key
        raise ConfigError(f"{path}: {shown} must be a number, not {str(value).lower()}")


def _takes_a_number(param: Param) -> bool:
    """Whether an option takes an int or a float (typer's type descriptor, else click's parameter type)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        kinds = set(get_args(descriptor.annotation)) or {descriptor.annotation}
        return bool(kinds & {int, float})
    kind = str(getattr(getattr(param, "type", None), "name", ""))
    return kind in ("integer", "float") or kind.endswith("range")


def _value_for(param: Param, value: Any) -> Any:
    """A repeatable option takes a list; one value in the file stands for a list of one."""
    if param.multiple and value is not None and not isinstance(value, list | tuple):
        return [value]
    return value


def config_defaults(path: Path, command: Command, root: Any) -> dict[str, Any]:
    """The file's values by parameter name, for `ctx.default_map`; unknown keys are an error (`root`: the root
    click context, whose group holds every command a shared file may be meant for)."""
    flat = flatten(load_config_file(path), str(path))
    keys = option_keys(command)
    everywhere: set[str] | None = None
    defaults: dict[str, Any] = {}
    for key, value in flat.items():
        param = keys.get(key)
        if param is not None and param.name is not None:
            _check_number(path, key, param, value)
            defaults[param.name] = _value_for(param, value)
            continue
        everywhere = _all_option_keys(root) if everywhere is None else everywhere
        if key not in everywhere:
            known = sorted({k for k in keys if "_" in k or k.isalpha()})
            raise ConfigError(f"{path}: {_unknown_key(key, known, section_keys(load_config_file(path)))}; keys "
                              f"are the options of `{command.name}` with underscores (see --help), optionally under "
                              "writer: / judge:")
    return defaults


def section_keys(raw: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Which flat keys came from a `writer:` / `judge:` section, as (section, key as written): an error about
    one must name what the file holds, not the prefixed name `flatten` made of it."""
    written: dict[str, tuple[str, str]] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name in SECTIONS and isinstance(value, dict):
            for sub in value:
                sub_name = str(sub).replace("-", "_")
                written[SECTIONS[name] + FIELD_ALIASES.get(sub_name, sub_name)] = (name, str(sub))
    return written


def _unknown_key(key: str, known: list[str], written: dict[str, tuple[str, str]]) -> str:
    """'unknown key K (did you mean ...?)', K as the file spells it; in a section the suggestion is the
    section's own key (`base_url` under judge:, not `judge_base_url`)."""
    if key not in written:
        return f"unknown key {key!r}{did_you_mean(key, known)}"
    section, sub = written[key]
    prefix = SECTIONS[section]
    in_section = [k[len(prefix):] for k in known if k.startswith(prefix) and (prefix or not k.startswith("judge_"))]
    return f"unknown key {sub!r} under {section}:{did_you_mean(sub, in_section)}"


def apply_config(ctx: Any, param: Param, value: Path | None) -> Path | None:
    """Eager callback of --config: load the file into the context's default map before other options."""
    if value is not None:
        ctx.default_map = {**(ctx.default_map or {}), **config_defaults(value, ctx.command, ctx.find_root())}
    return value
