"""Settings models. The only module that reads environment variables.

Precedence everywhere: command-line flag > config file (`--config howtobench.yaml`) >
environment > built-in default. API keys are read from the variable *named* in the
settings at call time and are never stored in a setting, a file, a cache or a log.
"""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path
from typing import Any, Literal

import platformdirs
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from howtobench.errors import ConfigError
from howtobench.redact import redact_url, remember_secret, remember_url_secrets

DATA_ENV = "HOWTOBENCH_DATA"
MAX_TIMEOUT_S = 86_400.0  # a day, the longest a call may take (inf overflowed the event loop's timer: a traceback)
WORKSPACE_ENV = "HOWTOBENCH_WORKSPACE"
REWARD_URL_ENV = "HOWTOBENCH_REWARD_URL"  # the running `howtobench serve` the RL adapters call (howtobench.rl)
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# how the keys of the usual providers begin (OpenAI, Anthropic, Groq, xAI, Hugging Face, Google, GitHub, NVIDIA...)
_KEY_PREFIXES = ("sk-", "sk_", "gsk_", "xai-", "hf_", "AIza", "ghp_", "github_pat_", "nvapi-", "r8_", "pplx-",
                 "key-", "dsk-")


def api_key_env_problem(value: str) -> str | None:
    """Why `value` cannot be the NAME of the API-key variable (None when it can): not a variable name, or a key
    pasted in its place (a provider's key prefix; or long and mixing upper case, lower case and digits, which
    variable names are not). The value itself is never part of the answer: it may be the key."""
    looks_like_key = value.startswith(_KEY_PREFIXES) or (
        len(value) >= 20 and any(c.islower() for c in value) and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)) or (len(value) >= 32 and "_" not in value)
    if looks_like_key:
        return ("looks like an API key itself, not the name of the environment variable that holds it (the value is "
                "not shown): export the key, e.g. `export OPENAI_API_KEY=...`, and give the variable's name")
    if not _VARIABLE_NAME.fullmatch(value):
        return ("is not the name of an environment variable (letters, digits and _, e.g. OPENAI_API_KEY; the value "
                "is not shown, in case it is a key)")
    return None


ResponseFormat = Literal["json_schema", "json_object", "none"]
RESPONSE_FORMATS: tuple[str, ...] = typing.get_args(ResponseFormat)
"""How a reply's structure is asked for (`--response-format`): a JSON schema, JSON mode, or the prompt alone."""


# auto's cap per base URL: vLLM's own batch by default on a GPU of 70 GiB or more other than an A100 (max_num_seqs
# 1,024; 256 elsewhere). A cap at the batch leaves it short whenever a reply is being read: against an emulated
# batch of 256, serve kept it 0.86 full at a cap of 256 and 0.94 at 1,024 (bench/reward_path.py). The open files
# that many connections need: llm/open_files.py.
DEFAULT_MAX_CONCURRENCY = 1024
# the calls per base URL that writings in flight are sized for under auto concurrency (steps/client.py)
AUTO_WRITING_SLOTS = 256


def parse_concurrency(value: str) -> dict[str, int | None]:
    """`--concurrency` as written: "N" (fixed), "auto" or "auto:N" (found while running, at most N); the
    EndpointConfig fields it sets. Raises ValueError naming the forms."""
    text = value.strip().lower()
    head, _, cap = text.partition(":")
    try:
        if head == "auto":
            return {"concurrency": None, **({"max_concurrency": int(cap)} if cap else {})}
        if not cap:
            return {"concurrency": int(text)}
    except ValueError:
        pass
    raise ValueError(f"concurrency must be a whole number of calls, auto, or auto:N (at most N), not {value!r}")


class EndpointConfig(BaseModel):
    """One model behind one or more OpenAI-compatible base URLs.

    `EndpointConfig(model="gpt-4o", base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY")`:
    `base_url` takes one URL (a string) or several (a list); `base_urls` is the stored tuple.
    """

    model_config = ConfigDict(frozen=True)

    model: str
    base_urls: tuple[str, ...] = Field(min_length=1)
    api_key_env: str | None = None
    # calls in flight per base URL: a number fixes it; None ("auto", the default) finds it while running, up to
    # `max_concurrency` ("auto:N" sets both; llm/adaptive.py)
    concurrency: int | None = Field(default=None, ge=1)
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1)
    rpm: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=300.0, gt=0, le=MAX_TIMEOUT_S)
    max_retries: int = Field(default=6, ge=0)
    reasks: int = Field(default=2, ge=0)
    response_format: ResponseFormat = "json_schema"
    use_max_completion_tokens: bool = False
    # llama-cpp-python's server constrains decoding by a schema sent as {"type": "json_object", "schema": ...}
    # (it has no "json_schema" type); with response_format="json_object" this sends the schema that way.
    json_object_schema: bool = False

    @model_validator(mode="before")
    @classmethod
    def _one_or_many_urls(cls, data: Any) -> Any:
        """Accept `base_url=` (the name every OpenAI-compatible tool uses) and a single string for either name."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "base_url" in data:
            if data.get("base_urls"):
                raise ValueError("give base_url or base_urls, not both")
            data["base_urls"] = data.pop("base_url")
        if isinstance(data.get("base_urls"), str):
            data["base_urls"] = (data["base_urls"],)
        if isinstance(data.get("concurrency"), str):
            data.update(parse_concurrency(data["concurrency"]))
        return data

    @field_validator("concurrency", "rpm", "timeout_s", "max_retries", "reasks", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        """A number, never `true` / `yes` (a bool is an int to Python: `concurrency: yes` was 1 call at once)."""
        if isinstance(value, bool):
            raise ValueError(f"must be a number, not {str(value).lower()}")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, name: str | None) -> str | None:
        """A key pasted where its variable's name belongs is refused (and remembered, so no echo shows it)."""
        problem = None if name is None else api_key_env_problem(name)
        if problem is not None:
            remember_secret(name)
            raise ValueError(f"api_key_env {problem}")
        return name

    @field_validator("base_urls")
    @classmethod
    def _strip_slashes(cls, urls: tuple[str, ...]) -> tuple[str, ...]:
        """Trailing slashes off; each URL's credentials remembered, so no echo of them is ever shown."""
        for url in urls:
            remember_url_secrets(url)
        return tuple(u.rstrip("/") for u in urls)

    @property
    def capacity(self) -> int:
        """Requests this endpoint takes at once, at most: `concurrency` (auto: `max_concurrency`) per base URL."""
        return (self.concurrency or self.max_concurrency) * len(self.base_urls)

    @property
    def concurrency_text(self) -> str:
        """The setting as the user gives it: "64", "auto" or "auto:32"."""
        if self.concurrency is not None:
            return str(self.concurrency)
        return "auto" if self.max_concurrency == DEFAULT_MAX_CONCURRENCY else f"auto:{self.max_concurrency}"

    def api_key(self) -> str | None:
        """The key, read now from the environment; None when no variable is named."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(f"environment variable {self.api_key_env} (API key for {self.model}) is not set")
        remember_secret(key)  # a server that echoes it back is masked in every message (howtobench.redact)
        return key

    def public(self) -> dict[str, Any]:
        """What may be written to a manifest or config file: no key (it never is here) and base URLs without
        credentials (userinfo and key-like query parameters become ***, see `howtobench.redact`)."""
        data = self.model_dump(mode="json")
        data["base_urls"] = [redact_url(u) for u in self.base_urls]
        return data


def env(name: str) -> str | None:
    """Read one environment variable (kept here so nothing else touches os.environ)."""
    return os.environ.get(name) or None


def user_cache_dir() -> Path:
    """Per-user cache directory for the downloaded benchmark and the local model."""
    return Path(platformdirs.user_cache_dir("howtobench"))


def resolve_data_dir(flag: Path | None) -> Path:
    """Where the benchmark is: `--data`, else $HOWTOBENCH_DATA, else the per-user cache."""
    if flag is not None:
        return flag
    from_env = env(DATA_ENV)
    if from_env:
        return Path(from_env)
    return user_cache_dir() / "data"


def optional_data_dir(flag: Path | None) -> Path | None:
    """The benchmark for commands that can do without one (leaderboard, report): `--data`, else $HOWTOBENCH_DATA,
    else the per-user cache when `howtobench data download` filled it, else None."""
    if flag is not None or env(DATA_ENV):
        return resolve_data_dir(flag)
    cached = user_cache_dir() / "data"
    return cached if cached.is_dir() else None


def resolve_workspace(flag: str | Path | None) -> Path:
    """Where the cache database and run outputs live: `--workspace`, $HOWTOBENCH_WORKSPACE, ./.howtobench.

    A workspace that names a file (or lies under one) is refused here in words, not later as "File exists"."""
    workspace = Path(flag) if flag is not None else Path(env(WORKSPACE_ENV) or ".howtobench")
    for place in (workspace, *workspace.parents):
        if place.exists():
            if not place.is_dir():
                what = "is a file" if place == workspace else f"lies under {place}, a file"
                raise ConfigError(f"workspace {workspace} {what}, not a folder: the workspace is a folder (it holds "
                                  "the call cache and batch state); give --workspace a folder, new or existing")
            break
    return workspace


MAX_YAML_DEPTH = 32  # levels of lists and mappings a settings file may nest (ours need 3)


class NestedTooDeep(ValueError):
    """A YAML document nested past `MAX_YAML_DEPTH` (or past what the parser's recursion takes)."""


def safe_yaml(text: str) -> Any:
    """`yaml.safe_load(text)`, refusing pathological nesting with `NestedTooDeep` (a 100,000-deep file was a
    RecursionError traceback) instead of recursing into it."""
    from howtobench.strict_json import depth  # a leaf module: no import cycle

    try:
        loaded = yaml.safe_load(text)
    except RecursionError:
        raise NestedTooDeep(f"nested deeper than {MAX_YAML_DEPTH} levels") from None
    if depth(loaded) > MAX_YAML_DEPTH:
        raise NestedTooDeep(f"nested deeper than {MAX_YAML_DEPTH} levels")
    return loaded


def load_config_file(path: Path | None) -> dict[str, Any]:
    """Read a YAML config file of option defaults (keys are option names with underscores)."""
    if path is None:
        return {}
    try:
        loaded = safe_yaml(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except NestedTooDeep as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read config file {path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                          f"offset {exc.start}); save it as UTF-8") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {yaml_problem(exc, path)}") from exc
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping of option names to values")
    return loaded


def yaml_problem(exc: yaml.YAMLError, origin: str | Path) -> str:
    """A YAML syntax error on one line, as `FILE:LINE:COLUMN: problem` (PyYAML's own text spans several lines)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    return f"{origin}:{mark.line + 1}:{mark.column + 1}: {problem}" if mark is not None else f"{origin}: {problem}"


def proxy_for(url: str) -> str | None:
    """The HTTP(S) proxy for `url` from the standard *_PROXY / NO_PROXY variables; never for loopback.

    Resolved once per base URL by the LLM client (looking it up per request costs a thread hop each).
    """
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if host in ("localhost", "127.0.0.1", "::1") or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(parts.scheme) or None
