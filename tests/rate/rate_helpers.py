"""Shared pieces of the rating-app tests: a 10-writing study from the release, and a signed-in API client."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

ClientFactory = Callable[[], Awaitable[TestClient[Any, Any]]]
"""Makes one more API client (its own cookie jar: one rater) on the test server of the `clients` fixture."""

MODELS = ("gpt-4o-2024-11-20", "deepseek-r1", "claude-3-haiku-20240307", "gemini-2.0-flash", "Llama-3.3-70B-Instruct")
SCRIPT = "<script>alert('pwned')</script>"
"""Put into one writing: it must reach the page as text, never as markup."""


def guide_items(bench_root: Path, n: int = 2) -> list[str]:
    """The first n guide item ids of the release."""
    lines = (bench_root / "guide" / "aligned.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["infer_id"] for line in lines[:n]]


def write_writings(bench_root: Path, out: Path, n_items: int = 2) -> Path:
    """n_items guide instructions x the five MODELS (10 writings by default), shortened; one holds SCRIPT."""
    wanted = set(guide_items(bench_root, n_items))
    rows = []
    for model in MODELS:
        path = bench_root / "guide" / "inferences" / f"{model}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["infer_id"] in wanted:
                text = row["output"][:400] + (SCRIPT if model == "deepseek-r1" else "")
                rows.append({"infer_id": row["infer_id"], "model": model, "output": text})
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def csrf_of(html: str) -> str:
    match = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)
    assert match, "page has no CSRF token"
    return match.group(1)


async def sign_in(client: TestClient[Any, Any], name: str) -> str:
    """Sign `client` in as `name`; returns the CSRF token of the new session (read from the landing page)."""
    page = await client.get("/")
    token = csrf_of(await page.text())
    landed = await client.post("/signin", data={"name": name, "csrf": token})
    assert landed.status == 200, await landed.text()
    return csrf_of(await landed.text())


async def put_rating(client: TestClient[Any, Any], csrf: str, item: str, letter: str, body: dict[str, Any]) -> Any:
    return await client.put(f"/api/items/{item}/responses/{letter}", json=body, headers={"X-CSRF-Token": csrf})
