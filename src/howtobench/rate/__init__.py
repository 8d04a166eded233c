"""Collect human ratings: a local web app for the paper's MetaEditor protocol (or ToW leaves), and its export.

    study.py     a study folder: settings and the writings shown, fixed at creation (bad rows: file:line)
    store.py     the study's SQLite file (WAL, one committed transaction per change)
    protocol.py  scales, error types and the rules a rating must pass on the server
    assign.py    which instruction a rater takes next; progress
    security.py  sessions by name, CSRF, security headers
    views.py     what one rater may see (never another rater's ratings, never a model's name)
    app.py       the aiohttp.web routes: pages and the JSON API
    server.py    run it (127.0.0.1 by default)
    export.py    the ratings file `meta correlate` / `meta agreement` read; `rate status`
"""
