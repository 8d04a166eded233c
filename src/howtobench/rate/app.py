"""The rating web app (aiohttp.web): pages for people, a small JSON API for the page's script.

Pages (server-rendered by Jinja2 with autoescaping, so every model text is HTML-escaped):
    GET  /                      sign in by name (or go on to /rate)
    POST /signin, /signout      (forms; CSRF field)
    GET  /rate                  the rater's current instruction (first unfinished one, else a new one)
    GET  /rate/{item_id}        one instruction: instruction, grounding, reference, responses A, B, C...
    POST /next                  take the next instruction
    POST /rate/{item_id}/skip   skip it (released to another rater) or take it back (`skip=0`)
    GET  /queue                 the rater's instructions, to go back and change a rating
JSON API (same session cookie; `X-CSRF-Token` header on changes):
    GET  /api/progress                              the rater's progress and the study's coverage
    GET  /api/items/{item_id}                       the instruction page's content
    PUT  /api/items/{item_id}/responses/{letter}    save one rating (422 with the reason when refused)
    POST /api/items/{item_id}/skip                  {"skipped": true|false}
    POST /api/next                                  take the next instruction: {"item_id": ... | null}
Every request acts for the signed-in rater only: no route takes a rater's name, so nobody can read or
change another rater's ratings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from aiohttp import web

from howtobench.fonts import core_cjk_font
from howtobench.rate.assign import current_item, progress, take_next
from howtobench.rate.protocol import RatingRefused
from howtobench.rate.security import SESSION, Session, check_name, new_session, session_middleware, set_cookie
from howtobench.rate.study import Study
from howtobench.rate.views import item_view, progress_view, protocol_view, rating_view

HERE = Path(__file__).parent
STUDY = web.AppKey("study", Study)
TEMPLATES = web.AppKey("templates", jinja2.Environment)
MAX_BODY = 256 * 1024

def build_app(study: Study) -> web.Application:
    """The app serving one open study."""
    app = web.Application(middlewares=[session_middleware(study.store, study.cookie)], client_max_size=MAX_BODY)
    app[STUDY] = study
    app[TEMPLATES] = _templates()
    app.router.add_get("/", signin_page)
    app.router.add_post("/signin", signin)
    app.router.add_post("/signout", signout)
    app.router.add_get("/rate", rate_entry)
    app.router.add_get("/rate/{item_id}", item_page)
    app.router.add_post("/rate/{item_id}/skip", skip_form)
    app.router.add_post("/next", next_form)
    app.router.add_get("/queue", queue_page)
    app.router.add_get("/api/progress", api_progress)
    app.router.add_get("/api/items/{item_id}", api_item)
    app.router.add_put("/api/items/{item_id}/responses/{letter}", api_save)
    app.router.add_post("/api/items/{item_id}/skip", api_skip)
    app.router.add_post("/api/next", api_next)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get(FONT_URL, cjk_font)
    app.router.add_static("/static", HERE / "static")
    return app


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined
    )
    env.filters["q"] = lambda value: quote(str(value), safe="")
    return env


def _render(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    session: Session = request[SESSION]
    study = request.app[STUDY]
    html = request.app[TEMPLATES].get_template(template).render(
        csrf=session.csrf, rater=session.rater, study_name=study.folder.name, mode=study.settings.mode, **context
    )
    return web.Response(text=html, content_type="text/html", status=status)


def _rater(request: web.Request) -> str:
    """The signed-in rater, or a redirect to sign in (pages) / 401 (API)."""
    rater = request[SESSION].rater
    if rater is None:
        if request.path.startswith("/api/"):
            raise _json_error(web.HTTPUnauthorized, "sign in first")
        raise web.HTTPSeeOther("/")
    return str(rater)


def _json_error(kind: type[web.HTTPException], message: str) -> web.HTTPException:
    return kind(text=json.dumps({"error": message}), content_type="application/json")


def _item_url(item_id: str) -> str:
    return "/rate/" + quote(item_id, safe="")


# ------------------------------------------------------------------ pages


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


FONT_URL = "/font/cjk.woff"


async def cjk_font(request: web.Request) -> web.StreamResponse:
    """The core package's CJK font (`howtobench.fonts.CORE_CJK_FONT`, the file the HTML report cuts its glyphs from),
    for a rater whose machine has none (app.css names it after the system's), with no optional extra installed."""
    return web.Response(body=core_cjk_font(), headers={"Content-Type": "font/woff", "Cache-Control": "max-age=86400"})


async def signin_page(request: web.Request) -> web.Response:
    if request[SESSION].rater is not None:
        raise web.HTTPSeeOther("/rate")
    return _render(request, "signin.html", error=None, name="")


async def signin(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    raw = form.get("name")
    try:
        name = check_name(raw if isinstance(raw, str) else "")
    except ValueError as exc:
        return _render(request, "signin.html", status=422, error=str(exc), name=raw if isinstance(raw, str) else "")
    raise _switch_session(request, name, "/rate")


async def signout(request: web.Request) -> web.StreamResponse:
    raise _switch_session(request, None, "/")


def _switch_session(request: web.Request, rater: str | None, location: str) -> web.HTTPException:
    """End the request's session and start a new one (signed in as `rater`, or anonymous): a redirect to raise."""
    study = request.app[STUDY]
    study.store.drop_session(request[SESSION].token)
    response = web.HTTPSeeOther(location)
    set_cookie(response, study.cookie, new_session(study.store, rater))
    return response


async def rate_entry(request: web.Request) -> web.StreamResponse:
    rater = _rater(request)
    study = request.app[STUDY]
    item_id = current_item(study, rater)
    if item_id is None:
        p = progress(study, rater)
        return _render(request, "queue.html", done=True, progress=progress_view(p), groups=p.groups)
    raise web.HTTPSeeOther(_item_url(item_id))


async def item_page(request: web.Request) -> web.StreamResponse:
    rater = _rater(request)
    study = request.app[STUDY]
    view = item_view(study, rater, request.match_info["item_id"])
    if view is None:
        return _render(request, "message.html", status=404, title="Not one of your instructions",
                       message="This instruction is not in your queue. Use “Next instruction” to take a new one.")
    return _render(request, "item.html", view=view, protocol=protocol_view(study, view["item"]["task"]))


async def next_form(request: web.Request) -> web.StreamResponse:
    rater = _rater(request)
    item_id = take_next(request.app[STUDY], rater)
    raise web.HTTPSeeOther(_item_url(item_id) if item_id is not None else "/rate")


async def skip_form(request: web.Request) -> web.StreamResponse:
    rater = _rater(request)
    item_id = request.match_info["item_id"]
    form = await request.post()
    skipped = form.get("skip", "1") != "0"
    _set_skipped(request, rater, item_id, skipped)
    raise web.HTTPSeeOther("/rate" if skipped else _item_url(item_id))


async def queue_page(request: web.Request) -> web.Response:
    rater = _rater(request)
    p = progress(request.app[STUDY], rater)
    return _render(request, "queue.html", done=False, progress=progress_view(p), groups=p.groups)


def _set_skipped(request: web.Request, rater: str, item_id: str, skipped: bool) -> None:
    study = request.app[STUDY]
    if not progress(study, rater).holds(item_id):
        raise _json_error(web.HTTPNotFound, "not one of your instructions")
    study.store.set_skipped(item_id, rater, skipped)


# ------------------------------------------------------------------ JSON API


async def api_progress(request: web.Request) -> web.Response:
    rater = _rater(request)
    return web.json_response(progress_view(progress(request.app[STUDY], rater)))


async def api_item(request: web.Request) -> web.Response:
    rater = _rater(request)
    view = item_view(request.app[STUDY], rater, request.match_info["item_id"])
    if view is None:
        raise _json_error(web.HTTPNotFound, "not one of your instructions")
    return web.json_response(view)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _json_error(web.HTTPBadRequest, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise _json_error(web.HTTPBadRequest, "the body must be a JSON object")
    return body


async def api_save(request: web.Request) -> web.Response:
    """Check one rating against the scale and the protocol, then commit it before answering."""
    rater = _rater(request)
    study = request.app[STUDY]
    item_id, letter = request.match_info["item_id"], request.match_info["letter"]
    item = study.store.item(item_id)
    if item is None or not progress(study, rater).holds(item_id):
        raise _json_error(web.HTTPNotFound, "not one of your instructions")
    models = {w.letter: w.model for w in study.store.writings(item_id)}
    if letter not in models:
        raise _json_error(web.HTTPNotFound, f"no response {letter} for this instruction")
    body = await _json_body(request)
    try:
        rating = study.protocol.check(item.task, body)
    except RatingRefused as exc:
        raise _json_error(web.HTTPUnprocessableEntity, str(exc)) from None
    complete = study.protocol.is_complete(item.task, rating)
    study.store.save_rating(item_id, models[letter], rater, rating, complete)
    return web.json_response(
        {"letter": letter, "rating": rating_view(rating, complete), "progress": progress_view(progress(study, rater))}
    )


async def api_skip(request: web.Request) -> web.Response:
    rater = _rater(request)
    body = await _json_body(request)
    skipped = body.get("skipped")
    if not isinstance(skipped, bool):
        raise _json_error(web.HTTPBadRequest, "skipped must be true or false")
    _set_skipped(request, rater, request.match_info["item_id"], skipped)
    return web.json_response({"skipped": skipped, "progress": progress_view(progress(request.app[STUDY], rater))})


async def api_next(request: web.Request) -> web.Response:
    rater = _rater(request)
    return web.json_response({"item_id": take_next(request.app[STUDY], rater)})
