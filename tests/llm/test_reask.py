"""The one re-ask loop every caller shares (issue 25 point 3): the follow-ups it sends and when it stops."""

from __future__ import annotations

from howtobench.llm.reask import ask_until_accepted


async def test_each_reask_carries_every_refused_reply_and_the_loop_stops_at_the_limit() -> None:
    seen: list[list[dict[str, str]]] = []

    async def ask(extra: list[dict[str, str]]) -> str:
        seen.append(extra)
        return f"reply {len(seen)}"

    async def refusal_of(reply: str) -> tuple[str, str] | None:
        return reply, "too long"

    asked = await ask_until_accepted(ask, refusal_of, 2, follow_up=lambda text, why: [{"role": "x", "content": text}])
    assert (asked.reply, asked.refusal, asked.asks) == ("reply 3", ("reply 3", "too long"), 3)
    assert seen == [[], [{"role": "x", "content": "reply 1"}],
                    [{"role": "x", "content": "reply 1"}, {"role": "x", "content": "reply 2"}]]


async def test_a_kept_reply_ends_the_loop_and_the_default_follow_up_names_the_reason() -> None:
    seen: list[list[dict[str, str]]] = []

    async def ask(extra: list[dict[str, str]]) -> int:
        seen.append(extra)
        return len(seen)

    async def refusal_of(reply: int) -> tuple[str, str] | None:
        return None if reply == 2 else ("{}", "missing score")

    asked = await ask_until_accepted(ask, refusal_of, 5)
    assert (asked.reply, asked.refusal, asked.asks) == (2, None, 2)
    assert seen[1][0] == {"role": "assistant", "content": "{}"} and "missing score" in seen[1][1]["content"]
