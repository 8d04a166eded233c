"""Provenance blocks of the HTML report: a run's manifest, and what the judgments themselves record.

A number is only worth what its provenance is: which models, which judge at which endpoint, which tree and
prompt versions (hashes), which benchmark file (sha256), and what it cost. The manifest (already scrubbed of
secrets by `html_inputs.scrub`) is laid out in those groups; judgment files without a run directory still carry
their method, judge model, hashes and token usage, summed here per method.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from howtobench.judges.base import Judgment
from howtobench.llm.types import Usage
from howtobench.redact import redact_text

OVERVIEW_KEYS = ("name", "method", "smoke", "toolkit", "written_at", "judgments", "bootstrap", "seeds", "sampling",
                 "system_prompt")
USAGE_HEADER = ["purpose", "calls", "cached calls", "prompt tokens", "completion tokens", "cost (USD)"]
SHOWN_KEYS = {*OVERVIEW_KEYS, "writer", "judge", "tree_hashes", "prompt_hashes", "generation_templates", "data",
              "items", "usage", "outputs"}


@dataclass(frozen=True)
class ManifestView:
    overview: list[tuple[str, str]]
    endpoints: list[tuple[str, list[tuple[str, str]]]]
    hashes: list[tuple[str, str]]
    usage: list[list[str]]
    outputs: list[str]
    other: str
    smoke: bool


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):  # a reader's word, not Python's True / JSON's true
        return "yes" if value else "no"
    if value is None:
        return "—"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def usage_line(label: str, u: dict[str, Any]) -> list[str]:
    cost = u.get("cost_usd")
    return [
        label,
        f"{u.get('calls', 0):,}",
        f"{u.get('cached_calls', 0):,}",
        f"{u.get('prompt_tokens', 0):,}",
        f"{u.get('completion_tokens', 0):,}",
        "—" if cost is None else f"{float(cost):.4f}",
    ]


def _hashes(m: dict[str, Any]) -> list[tuple[str, str]]:
    out = [("tree", h) for h in m.get("tree_hashes") or []]
    out += [("judge prompts", h) for h in m.get("prompt_hashes") or []]
    out += [(f"generation template {k}", _text(v)) for k, v in sorted((m.get("generation_templates") or {}).items())]
    data = m.get("data") or {}
    shas = sorted((data.get("aligned_sha256") or {}).items())
    out += [(f"data {task}/aligned.jsonl sha256", _text(h)) for task, h in shas]
    return out


def manifest_view(m: dict[str, Any]) -> ManifestView:
    """Group a run manifest for display; keys it does not know are shown raw under 'other'."""
    overview = [(k, _text(m[k])) for k in OVERVIEW_KEYS if k in m]
    if isinstance(m.get("items"), list):
        overview.append(("items", f"{len(m['items']):,}"))
    data_dir = (m.get("data") or {}).get("dir")
    if data_dir:
        overview.append(("benchmark folder", _text(data_dir)))
    endpoints = [  # redacted again: a manifest written before URLs were redacted may still hold credentials
        (role, [(k, redact_text(_text(v))) for k, v in m[role].items()])
        for role in ("writer", "judge")
        if isinstance(m.get(role), dict)
    ]
    usage = m.get("usage") or {}
    rows = [usage_line(p, u) for p, u in usage.items() if p != "total" and isinstance(u, dict)]
    if isinstance(usage.get("total"), dict):
        rows.append(usage_line("total", usage["total"]))
    other = {k: v for k, v in m.items() if k not in SHOWN_KEYS}
    return ManifestView(
        overview=overview,
        endpoints=endpoints,
        hashes=_hashes(m),
        usage=rows,
        outputs=[_text(o) for o in m.get("outputs") or []],
        other=redact_text(json.dumps(other, ensure_ascii=False, indent=2)) if other else "",
        smoke=bool(m.get("smoke")),
    )


@dataclass(frozen=True)
class ProvenanceView:
    """Per method: judge models, tree and prompt hashes, judgments, summed token usage."""

    header: list[str]
    rows: list[list[str]]


def provenance(judgments: Sequence[Judgment]) -> ProvenanceView:
    by_method: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_method.setdefault(j.method, []).append(j)
    header = ["method", "judge model", "tree hash", "prompt hash", "judgments", *USAGE_HEADER[1:]]
    rows = []
    for method, js in sorted(by_method.items()):
        total = sum((j.usage for j in js), Usage())
        judges = ", ".join(sorted({j.judge_model for j in js if j.judge_model})) or "—"
        trees = ", ".join(sorted({j.tree_hash for j in js if j.tree_hash})) or "—"
        prompts = ", ".join(sorted({j.prompt_hash for j in js if j.prompt_hash})) or "—"
        rows.append([method, judges, trees, prompts, f"{len(js):,}", *usage_line(method, total.model_dump())[1:]])
    return ProvenanceView(header, rows)
