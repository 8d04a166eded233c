"""The study's SQLite file: the writings being rated, sign-in sessions, claims and every rating.

One file per study (`DIR/study.sqlite`) in WAL mode with `synchronous=FULL`, and every change is its own
committed transaction: when a request has answered, its rating is on disk, so closing the tab or killing
the server (even with SIGKILL) loses nothing. `history` keeps every saved version of a rating, so changes
of mind stay visible to the researcher. Session tokens are stored as sha256 digests only.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from howtobench.data.models import Item
from howtobench.errors import DataError, OutputError
from howtobench.rate.protocol import Rating

DB_NAME = "study.sqlite"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    item_id TEXT PRIMARY KEY, position INTEGER NOT NULL, task TEXT NOT NULL, genre TEXT NOT NULL,
    language TEXT NOT NULL, instruction TEXT NOT NULL, information TEXT NOT NULL, reference TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS writings (
    item_id TEXT NOT NULL REFERENCES items(item_id), model TEXT NOT NULL, letter TEXT NOT NULL,
    output TEXT NOT NULL, PRIMARY KEY (item_id, model), UNIQUE (item_id, letter));
CREATE TABLE IF NOT EXISTS sessions (
    token_sha256 TEXT PRIMARY KEY, csrf TEXT NOT NULL, rater TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claims (
    item_id TEXT NOT NULL REFERENCES items(item_id), rater TEXT NOT NULL, position INTEGER NOT NULL,
    skipped INTEGER NOT NULL DEFAULT 0, claimed_at TEXT NOT NULL, PRIMARY KEY (item_id, rater));
CREATE TABLE IF NOT EXISTS ratings (
    item_id TEXT NOT NULL, model TEXT NOT NULL, rater TEXT NOT NULL, score INTEGER, dims TEXT NOT NULL,
    error_types TEXT NOT NULL, comment TEXT NOT NULL, complete INTEGER NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (item_id, model, rater), FOREIGN KEY (item_id, model) REFERENCES writings(item_id, model));
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, rater TEXT NOT NULL, item_id TEXT NOT NULL, model TEXT NOT NULL,
    rating TEXT NOT NULL);
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StoredWriting:
    """One response as the study shows it: its anonymous letter and text (the model stays on the server)."""

    item_id: str
    model: str
    letter: str
    output: str


@dataclass(frozen=True)
class StoredRating:
    item_id: str
    model: str
    rater: str
    rating: Rating
    complete: bool
    updated_at: str


@dataclass(frozen=True)
class Claim:
    item_id: str
    position: int
    skipped: bool


class StudyStore:
    """Typed reads and committed writes over one study file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA busy_timeout=5000")
            self.db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise OutputError(f"cannot open the study file {path}: {exc}") from exc

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One committed unit of work (IMMEDIATE, so two servers on one study cannot interleave a claim)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ settings and content

    def meta(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self.db.execute("SELECT key, value FROM meta")}

    def initialize(
        self, meta: dict[str, str], items: Iterable[tuple[int, Item]], writings: Iterable[StoredWriting]
    ) -> None:
        """Write a new study's settings and content in one transaction."""
        with self.transaction() as db:
            db.executemany("INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("schema", SCHEMA_VERSION)])
            db.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(it.id, pos, it.task, it.genre, it.language, it.instruction, it.information, it.reference)
                 for pos, it in items],
            )
            db.executemany(
                "INSERT INTO writings VALUES (?, ?, ?, ?)", [(w.item_id, w.model, w.letter, w.output) for w in writings]
            )

    def check_schema(self) -> None:
        version = self.meta().get("schema")
        if version != SCHEMA_VERSION:
            raise DataError(f"{self.path}: study file schema {version!r}, this howtobench reads {SCHEMA_VERSION!r}")

    def items(self) -> list[Item]:
        """Every item of the study in its seeded order."""
        rows = self.db.execute("SELECT * FROM items ORDER BY position").fetchall()
        return [_item(row) for row in rows]

    def item(self, item_id: str) -> Item | None:
        row = self.db.execute("SELECT * FROM items WHERE item_id = ?", (item_id,)).fetchone()
        return None if row is None else _item(row)

    def writings(self, item_id: str | None = None) -> list[StoredWriting]:
        """Responses in letter order (A, B, ...), of one item or of all."""
        sql = "SELECT item_id, model, letter, output FROM writings"
        args: tuple[str, ...] = ()
        if item_id is not None:
            sql, args = sql + " WHERE item_id = ?", (item_id,)
        rows = self.db.execute(sql + " ORDER BY item_id, length(letter), letter", args).fetchall()
        return [StoredWriting(r["item_id"], r["model"], r["letter"], r["output"]) for r in rows]

    # ------------------------------------------------------------------ sessions

    def add_session(self, token: str, csrf: str, rater: str | None) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)", (token_digest(token), csrf, rater, now()))

    def session(self, token: str) -> tuple[str, str | None] | None:
        """(csrf token, rater or None when not signed in) of a session cookie."""
        row = self.db.execute("SELECT csrf, rater FROM sessions WHERE token_sha256 = ?", (token_digest(token),))
        found = row.fetchone()
        return None if found is None else (found["csrf"], found["rater"])

    def drop_session(self, token: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM sessions WHERE token_sha256 = ?", (token_digest(token),))

    # ------------------------------------------------------------------ claims

    def claims(self, rater: str) -> list[Claim]:
        """The rater's instructions in the order they were taken."""
        rows = self.db.execute(
            "SELECT item_id, position, skipped FROM claims WHERE rater = ? ORDER BY position", (rater,)
        ).fetchall()
        return [Claim(r["item_id"], r["position"], bool(r["skipped"])) for r in rows]

    def claim_next(self, rater: str, raters_per_item: int) -> str | None:
        """Give the rater the first item (in study order) they do not hold that still lacks raters; None if none."""
        with self.transaction() as db:
            row = db.execute(
                "SELECT i.item_id FROM items i"
                " WHERE NOT EXISTS (SELECT 1 FROM claims c WHERE c.item_id = i.item_id AND c.rater = ?)"
                " AND (SELECT count(*) FROM claims c WHERE c.item_id = i.item_id AND c.skipped = 0) < ?"
                " ORDER BY i.position LIMIT 1",
                (rater, raters_per_item),
            ).fetchone()
            if row is None:
                return None
            position = db.execute(
                "SELECT coalesce(max(position), -1) + 1 AS p FROM claims WHERE rater = ?", (rater,)
            ).fetchone()["p"]
            db.execute("INSERT INTO claims VALUES (?, ?, ?, 0, ?)", (row["item_id"], rater, position, now()))
            return str(row["item_id"])

    def writing_counts(self) -> dict[str, int]:
        """Responses per item."""
        rows = self.db.execute("SELECT item_id, count(*) AS n FROM writings GROUP BY item_id")
        return {r["item_id"]: r["n"] for r in rows}

    def complete_counts(self, rater: str) -> dict[str, int]:
        """Complete ratings per item by one rater."""
        rows = self.db.execute(
            "SELECT item_id, count(*) AS n FROM ratings WHERE rater = ? AND complete = 1 GROUP BY item_id", (rater,)
        )
        return {r["item_id"]: r["n"] for r in rows}

    def writings_rated(self, raters_per_writing: int) -> int:
        """Writings that have at least `raters_per_writing` complete ratings."""
        row = self.db.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM ratings WHERE complete = 1 GROUP BY item_id, model"
            " HAVING count(*) >= ?)",
            (raters_per_writing,),
        ).fetchone()
        return int(row["n"])

    def set_skipped(self, item_id: str, rater: str, skipped: bool) -> None:
        with self.transaction() as db:
            db.execute("UPDATE claims SET skipped = ? WHERE item_id = ? AND rater = ?", (int(skipped), item_id, rater))

    # ------------------------------------------------------------------ ratings

    def save_rating(self, item_id: str, model: str, rater: str, rating: Rating, complete: bool) -> StoredRating:
        """Upsert one rating and log the version, in one transaction; a rating un-skips its item."""
        at = now()
        values = (rating.score, _dump(rating.dims), _dump(list(rating.error_types)), rating.comment, int(complete), at)
        with self.transaction() as db:
            db.execute(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, model, rater) DO UPDATE"
                " SET score = excluded.score, dims = excluded.dims, error_types = excluded.error_types,"
                " comment = excluded.comment, complete = excluded.complete, updated_at = excluded.updated_at",
                (item_id, model, rater, *values),
            )
            db.execute("INSERT INTO history (at, rater, item_id, model, rating) VALUES (?, ?, ?, ?, ?)",
                       (at, rater, item_id, model, _dump(_rating_dict(rating))))
            db.execute("UPDATE claims SET skipped = 0 WHERE item_id = ? AND rater = ?", (item_id, rater))
        return StoredRating(item_id, model, rater, rating, complete, at)

    def ratings(self, *, rater: str | None = None, item_id: str | None = None) -> list[StoredRating]:
        """Saved ratings, optionally of one rater and/or one item."""
        where, args = [], []
        for column, value in (("rater", rater), ("item_id", item_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT * FROM ratings" + (" WHERE " + " AND ".join(where) if where else "")
        rows = self.db.execute(sql + " ORDER BY item_id, model, rater", args).fetchall()
        return [_stored_rating(r) for r in rows]

    def raters(self) -> list[str]:
        rows = self.db.execute("SELECT rater FROM claims UNION SELECT rater FROM ratings ORDER BY rater")
        return [r["rater"] for r in rows]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _rating_dict(rating: Rating) -> dict[str, Any]:
    return {"score": rating.score, "dims": rating.dims, "error_types": list(rating.error_types),
            "comment": rating.comment}


def _item(row: sqlite3.Row) -> Item:
    return Item.model_validate({
        "id": row["item_id"], "task": row["task"], "genre": row["genre"], "language": row["language"],
        "instruction": row["instruction"], "information": row["information"], "reference": row["reference"],
    })


def _stored_rating(row: sqlite3.Row) -> StoredRating:
    rating = Rating(
        score=row["score"], dims=json.loads(row["dims"]), error_types=tuple(json.loads(row["error_types"])),
        comment=row["comment"],
    )
    return StoredRating(row["item_id"], row["model"], row["rater"], rating, bool(row["complete"]), row["updated_at"])
