"""What a writer's reply is: its reasoning kept apart, and whether the server let it finish.

Shared by every job that has a model write (`generate`, the robustness transfers, the inspect scorers), so it
sits in the client layer rather than in one of them. The server's `finish_reason` decides: text cut by
max_tokens (or a content filter) is kept and flagged truncated; an answer that is empty because it was cut, or
a `<think>` that never closes (the reasoning used up every token), is no writing at all, with that reason.
"""

from __future__ import annotations

import re

from howtobench.llm.types import ChatResult

_THINK_RE = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
CUT_REASONS = ("length", "content_filter")  # the server stopped the model before it had finished


def split_reasoning(text: str, reasoning: str | None) -> tuple[str, str | None]:
    """Keep a reasoning trace out of the writing: a leading `<think>…</think>` block moves to `reasoning`.

    The client already strips it; this is the last guard before a trace would be judged as the writing.
    """
    found = _THINK_RE.match(text)
    if not found:
        return text, reasoning
    trace = found.group(1).strip()
    return text[found.end() :], "\n\n".join(t for t in (reasoning, trace) if t) or None


# ------------------------------------------------------------------ what a reply is


def _thinking_never_ends(raw: str) -> bool:
    opened = raw.rfind("<think>")
    return opened >= 0 and raw.find("</think>", opened) < 0


def finish_problem(result: ChatResult, max_tokens: int | None) -> str | None:
    """Why a reply the server sent in full is still no writing; None when it is one (perhaps truncated)."""
    cap = f"the max_tokens of {max_tokens}" if max_tokens else "the token limit"
    why = {"length": f"{cap} ran out", "content_filter": "the server's content filter stopped it"}
    stop = f"finish_reason {result.finish_reason!r}"
    if _thinking_never_ends(result.raw_text or ""):
        return (f"reasoning never ended: the reply opens <think> and never closes it ({stop}), so there is no "
                f"answer; raise --max-tokens or turn the model's thinking off")
    text, _ = split_reasoning(result.text or "", result.reasoning)
    if not text.strip() and result.finish_reason in CUT_REASONS:
        hint = "; raise --max-tokens" if result.finish_reason == "length" else ""
        return f"empty answer: {why[result.finish_reason]} before the model wrote anything ({stop}){hint}"
    return None


def is_truncated(result: ChatResult) -> bool:
    """The text stops where the server stopped the model (max_tokens or a content filter), not where it ended."""
    return result.finish_reason in CUT_REASONS
