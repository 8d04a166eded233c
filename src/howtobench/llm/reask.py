"""The one re-ask loop: ask, check the reply, and on a problem ask again with the reply and the reason.

Every caller that asks a model for something a check can refuse goes through `ask_until_accepted`: the client
(a reply that does not match its JSON schema), the inspect adapter (the same, through an inspect model), the
weight negotiator (weights that break the tree's constraints) and the benchmark builder (a theme too long, an
empty summary). Each supplies how to ask given the follow-up messages so far, what is wrong with a reply (None:
nothing, keep it), and, where it words the follow-up differently, how to ask again; the loop is the same
everywhere: at most `reasks` re-asks, each carrying every earlier refused reply and its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from howtobench.llm.structured import reask_messages

T = TypeVar("T")
Messages = list[dict[str, str]]
Refusal = tuple[str, str]
"""(the refused reply's text, why it was refused)."""


@dataclass(frozen=True)
class Asked(Generic[T]):
    """The last reply, the last refusal (None when the last reply was kept) and how many asks were made."""

    reply: T
    refusal: Refusal | None
    asks: int


async def ask_until_accepted(ask: Callable[[Messages], Awaitable[T]],
                             refusal_of: Callable[[T], Awaitable[Refusal | None]], reasks: int, *,
                             follow_up: Callable[[str, str], Messages] = reask_messages) -> Asked[T]:
    """Ask with no follow-up; while `refusal_of(reply)` names a problem and re-asks remain, ask again with the
    refused replies and their reasons appended (`follow_up(text, why)`, the structured-output wording by
    default). A reply `refusal_of` keeps (None) ends the loop at once, so a failed call is kept, not re-asked."""
    extra: Messages = []
    asks = 0
    while True:
        reply = await ask(list(extra))
        asks += 1
        refusal = await refusal_of(reply)
        if refusal is None or asks > reasks:
            return Asked(reply, refusal, asks)
        extra += follow_up(*refusal)
