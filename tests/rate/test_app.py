"""The rating app's HTTP API and pages through aiohttp's test client (MetaEditor mode)."""

from __future__ import annotations

from typing import Any

import pytest
from rate_helpers import SCRIPT, ClientFactory, csrf_of, guide_items, put_rating, sign_in

from howtobench.rate.study import Study

GOOD = {"score": 4, "comment": "close to the reference"}


async def _first_item(client: Any) -> str:
    """The instruction a signed-in rater lands on."""
    page = await client.get("/rate")
    assert page.status == 200
    return str(page.url.path.rsplit("/", 1)[1])


async def test_sign_in_needs_the_csrf_token(clients: ClientFactory) -> None:
    client = await clients()
    first = await client.get("/rate", allow_redirects=False)
    assert first.headers["Location"] == "/"
    assert "HttpOnly" in first.headers["Set-Cookie"] and "SameSite=Strict" in first.headers["Set-Cookie"]
    page = await client.get("/")
    token = csrf_of(await page.text())
    assert (await client.post("/signin", data={"name": "alice"})).status == 403
    assert (await client.post("/signin", data={"name": "alice", "csrf": "forged"})).status == 403
    assert (await client.post("/signin", data={"name": "  ", "csrf": token})).status == 422
    landed = await client.post("/signin", data={"name": "alice", "csrf": token})
    assert landed.status == 200 and landed.url.path.startswith("/rate/")
    assert "signed in as <strong id=\"rater-name\">alice</strong>" in await landed.text()


async def test_rating_is_saved_changed_and_logged(clients: ClientFactory, study: Study) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    item = await _first_item(client)
    saved = await put_rating(client, csrf, item, "A", GOOD)
    assert saved.status == 200
    body = await saved.json()
    assert body["rating"] == {"score": 4, "dims": {}, "error_types": [], "comment": "close to the reference",
                              "complete": True}
    assert body["progress"]["responses_rated"] == 1 and body["progress"]["responses_total"] == 5
    changed = await put_rating(client, csrf, item, "A", {"score": 2, "error_types": ["factual_error"]})
    assert changed.status == 200
    [stored] = study.store.ratings(rater="alice")
    assert (stored.rating.score, stored.rating.error_types, stored.complete) == (2, ("factual_error",), True)
    assert study.store.db.execute("SELECT count(*) FROM history").fetchone()[0] == 2
    view = await (await client.get(f"/api/items/{item}")).json()
    assert view["responses"][0]["rating"]["score"] == 2
    assert view["responses"][1]["rating"]["score"] is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"score": 6}, "outside the scale 1-5"),
        ({"score": 0}, "outside the scale 1-5"),
        ({"score": 3.5}, "whole number"),
        ({"score": "four"}, "whole number"),
        ({"score": True}, "whole number"),
        ({"score": 2}, "needs at least one error type"),
        ({"score": 4, "error_types": ["factual_error"]}, "must be below 3"),
        ({"score": 2, "error_types": ["safety"]}, "means a score of 1"),
        ({"score": 2, "error_types": ["typo"]}, "unknown error type"),
        ({"score": 4, "rater": "bob"}, "unknown field 'rater'"),
        ({"score": 4, "dims": {"logic": 5}}, "belong to ToW studies"),
        ({"score": 4, "comment": "x" * 4001}, "longer than 4000"),
    ],
)
async def test_the_server_refuses_what_breaks_the_scale_or_protocol(
    clients: ClientFactory, study: Study, body: dict[str, Any], reason: str
) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    item = await _first_item(client)
    refused = await put_rating(client, csrf, item, "B", body)
    assert refused.status == 422
    assert reason in (await refused.json())["error"]
    assert study.store.ratings() == []


async def test_a_draft_comment_is_kept_but_not_complete(clients: ClientFactory, study: Study) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    item = await _first_item(client)
    saved = await put_rating(client, csrf, item, "C", {"comment": "come back to this"})
    assert (await saved.json())["rating"]["complete"] is False
    [stored] = study.store.ratings()
    assert stored.rating.comment == "come back to this" and not stored.complete


async def test_changes_need_the_sessions_own_csrf_token(clients: ClientFactory, study: Study) -> None:
    alice, bob = await clients(), await clients()
    alice_csrf = await sign_in(alice, "alice")
    bob_csrf = await sign_in(bob, "bob")
    item = await _first_item(alice)
    url = f"/api/items/{item}/responses/A"
    assert (await alice.put(url, json=GOOD)).status == 403
    assert (await alice.put(url, json=GOOD, headers={"X-CSRF-Token": bob_csrf})).status == 403
    foreign = {"X-CSRF-Token": alice_csrf, "Origin": "http://evil.example"}
    assert (await alice.put(url, json=GOOD, headers=foreign)).status == 403
    assert (await alice.post("/next")).status == 403
    assert (await alice.post(f"/rate/{item}/skip", data={"skip": "1"})).status == 403
    assert study.store.ratings() == [] and study.store.claims("alice")[0].skipped is False


async def test_a_rater_cannot_read_or_change_another_raters_ratings(clients: ClientFactory, study: Study) -> None:
    alice, bob = await clients(), await clients()
    alice_csrf = await sign_in(alice, "alice")
    bob_csrf = await sign_in(bob, "bob")
    item = await _first_item(alice)
    assert await _first_item(bob) == item  # two raters per writing: both take the first instruction
    assert (await put_rating(alice, alice_csrf, item, "A", {"score": 5, "comment": "alice's secret"})).status == 200
    bob_view = await (await bob.get(f"/api/items/{item}")).json()
    assert bob_view["responses"][0]["rating"]["score"] is None
    bob_page = await (await bob.get(f"/rate/{item}")).text()
    assert "alice&#39;s secret" not in bob_page and "alice's secret" not in bob_page
    assert (await put_rating(bob, bob_csrf, item, "A", {"score": 1, "error_types": ["safety"]})).status == 200
    by_rater = {r.rater: r.rating.score for r in study.store.ratings(item_id=item)}
    assert by_rater == {"alice": 5, "bob": 1}
    # Model names never reach a rater: a response is only its letter.
    assert not any(model in str(bob_view) for model in {w.model for w in study.store.writings()})


async def test_instructions_outside_the_queue_are_not_served(clients: ClientFactory, study: Study,
                                                             bench_root: Any) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    first = await _first_item(client)
    other = next(i for i in guide_items(bench_root) if i != first)
    assert (await client.get(f"/api/items/{other}")).status == 404
    assert (await client.get(f"/rate/{other}")).status == 404
    assert (await put_rating(client, csrf, other, "A", GOOD)).status == 404
    assert (await put_rating(client, csrf, first, "Z", GOOD)).status == 404
    assert study.store.ratings() == []


async def test_model_text_is_escaped(clients: ClientFactory) -> None:
    client = await clients()
    await sign_in(client, "alice")
    item = await _first_item(client)
    page = await client.get(f"/rate/{item}")
    text = await page.text()
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in text
    assert SCRIPT not in text
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"


async def test_queue_skip_next_and_back(clients: ClientFactory, study: Study) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    first = await _first_item(client)
    for letter, score in zip("ABCDE", (5, 4, 3, 4, 5), strict=True):
        assert (await put_rating(client, csrf, first, letter, {"score": score})).status == 200
    second = (await (await client.post("/api/next", headers={"X-CSRF-Token": csrf})).json())["item_id"]
    assert second not in (None, first)
    view = await (await client.get(f"/api/items/{second}")).json()
    assert (view["prev"], view["next"], view["position"]) == (first, None, 2)
    assert view["progress"]["finished"] == 1 and view["progress"]["responses_rated"] == 5
    skipped = await client.post(f"/api/items/{second}/skip", json={"skipped": True}, headers={"X-CSRF-Token": csrf})
    assert (await skipped.json())["progress"]["skipped"] == 1
    assert (await (await client.post("/api/next", headers={"X-CSRF-Token": csrf})).json())["item_id"] is None
    done = await client.get("/rate")
    assert 'id="all-done"' in await done.text()
    # Back to the first instruction and change a rating there.
    assert (await put_rating(client, csrf, first, "A", {"score": 3})).status == 200
    assert {r.rating.score for r in study.store.ratings(rater="alice") if r.model} >= {3}


async def test_a_skipped_instruction_goes_to_another_rater(clients: ClientFactory, study: Study) -> None:
    alice, bob, carol = await clients(), await clients(), await clients()
    alice_csrf = await sign_in(alice, "alice")
    await sign_in(bob, "bob")
    await sign_in(carol, "carol")
    first = await _first_item(alice)
    assert await _first_item(bob) == first
    assert await _first_item(carol) != first  # the first instruction already has its two raters
    await alice.post(f"/rate/{first}/skip", data={"skip": "1", "csrf": alice_csrf})
    dave = await clients()
    await sign_in(dave, "dave")
    assert await _first_item(dave) == first


async def test_sign_out_ends_the_session(clients: ClientFactory) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    out = await client.post("/signout", data={"csrf": csrf})
    assert out.status == 200 and out.url.path == "/"
    assert (await client.get("/api/progress")).status == 401


async def test_the_app_serves_the_cjk_font_the_package_ships(clients: ClientFactory) -> None:
    """On a machine without a CJK font the rater saw boxes for every Chinese character; the page now names the font
    the package ships (Noto Sans CJK SC, the core package's WOFF subset: no extra needed) after the system's, and
    the app serves it."""
    from importlib import resources

    client = await clients()
    css = await (await client.get("/static/app.css")).text()
    assert '@font-face { font-family: "Howtobench CJK"; src: url("/font/cjk.woff") format("woff");' in css
    assert '"Microsoft YaHei", "Howtobench CJK", sans-serif' in css
    font = await client.get("/font/cjk.woff")
    shipped = resources.files("howtobench").joinpath("assets/cjk-sc-subset.woff").read_bytes()
    assert font.status == 200 and font.headers["Content-Type"] == "font/woff"
    body = await font.read()
    assert body[:4] == b"wOFF" and body == shipped  # the WOFF file itself
    assert "font-src 'self'" in font.headers["Content-Security-Policy"]
