"""Where a batch-files job keeps its state: `<workspace>/batch_files.sqlite` (see `steps/batch_files.py`).

Per job (`Identified.key`: its output's run id and the digest of what it asks): the custom_ids each round exported
with their model, every answer imported, and what the job asks (`jobs`: its settings and command line, to name
the difference when another selection's file is imported). Only answers are stored (`is_answer`): a 200, or a
failure that is a fact about the writing (its prompt too long for the model, a content filter's refusal).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.errors import OutputError
from howtobench.llm.retry import classify_status
from howtobench.steps.job_identity import JobIdentity

DB_NAME = "batch_files.sqlite"


def error_message(body: bytes) -> str:
    """The message of an error body (`{"error": {"message": ...}}`), else the body's text."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return body.decode("utf-8", "replace")
    if isinstance(error, dict):
        return str(error.get("message", error))
    return str(error)


def is_answer(status: int, body: bytes) -> bool:
    """Whether an output line's status is the call's answer: a 200, or a writing-level failure (the prompt too
    long for the model's context, a content filter's refusal) that a live call would get too. Any other refusal
    says the request or the engine was wrong, not the writing: it is not stored, and the call is asked again."""
    return status == 200 or classify_status(status, error_message(body)) in ("too_long", "filtered")


@dataclass(frozen=True)
class Answer:
    """One imported output line: the HTTP status and body the call gets, and where it came from (file:line)."""

    custom_id: str
    status: int
    body: bytes
    source: str


@dataclass(frozen=True)
class Identified:
    """A batch-files job: its call-log run id (named by its output) and what it asks (`JobIdentity`)."""

    run_id: str
    identity: JobIdentity | None

    @property
    def key(self) -> str:
        """The job's key in the store: the run id and the digest of what it asks (the run id alone when the
        caller gave no identity)."""
        return self.run_id if self.identity is None else f"{self.run_id}#{self.identity.digest[:16]}"


class FileStore:
    """The exported custom_ids and imported answers of every job of a workspace (SQLite, committed per round)."""

    def __init__(self, workspace: Path) -> None:
        try:
            workspace.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(workspace / DB_NAME, timeout=30)
            self._db.executescript(
                "CREATE TABLE IF NOT EXISTS exported (job TEXT, custom_id TEXT, model TEXT, round INTEGER, file TEXT,"
                " PRIMARY KEY (job, custom_id));"
                "CREATE TABLE IF NOT EXISTS answered (job TEXT, custom_id TEXT, status INTEGER, body BLOB,"
                " source TEXT, PRIMARY KEY (job, custom_id));"
                "CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, run_id TEXT, digest TEXT, settings TEXT,"
                " command TEXT);")
        except (OSError, sqlite3.Error) as exc:
            raise OutputError(f"cannot open {workspace / DB_NAME}: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def other_jobs(self, job: Identified) -> list[tuple[dict[str, Any], str | None]]:
        """(settings, command) of the jobs with `job`'s run id (its output) but another identity that exported
        calls, oldest first."""
        rows = self._db.execute("SELECT settings, command FROM jobs WHERE run_id = ? AND job != ? AND job IN "
                                "(SELECT job FROM exported) ORDER BY rowid", (job.run_id, job.key))
        return [(json.loads(settings), command) for settings, command in rows.fetchall()]

    def adopt_unnamed(self, job: Identified) -> None:
        """Calls exported before jobs had an identity (keyed by run id alone) become `job`'s, once: a batch job
        under way when the toolkit was upgraded goes on."""
        if job.identity is None or self.exported(job.key):
            return
        known = self._db.execute("SELECT 1 FROM jobs WHERE job = ?", (job.run_id,)).fetchone()
        if known is not None or not self.exported(job.run_id):
            return
        with self._db:
            for table in ("exported", "answered"):
                self._db.execute(f"UPDATE {table} SET job = ? WHERE job = ?", (job.key, job.run_id))  # noqa: S608

    def exported(self, job: str) -> dict[str, str]:
        """custom_id -> model of every call `job` exported (all rounds)."""
        rows = self._db.execute("SELECT custom_id, model FROM exported WHERE job = ?", (job,))
        return dict(rows.fetchall())

    def owner(self, custom_id: str) -> str | None:
        """A job that exported `custom_id`, if any (to name it when another job's file is imported)."""
        row = self._db.execute("SELECT job FROM exported WHERE custom_id = ? LIMIT 1", (custom_id,)).fetchone()
        return None if row is None else str(row[0])

    def last_round(self, job: str) -> tuple[int, str, set[str]] | None:
        """(number, file, custom_ids) of the job's latest exported round."""
        row = self._db.execute("SELECT MAX(round) FROM exported WHERE job = ?", (job,)).fetchone()
        if row is None or row[0] is None:
            return None
        rows = self._db.execute("SELECT custom_id, file FROM exported WHERE job = ? AND round = ?", (job, row[0]))
        found = rows.fetchall()
        return int(row[0]), str(found[0][1]), {r[0] for r in found}

    def answer(self, job: str, custom_id: str) -> tuple[int, bytes] | None:
        """The stored answer of a call, if it is one (`is_answer`): a refusal stored by an older version is not,
        so its call goes into the next round and a good answer imported later is taken."""
        row = self._db.execute("SELECT status, body FROM answered WHERE job = ? AND custom_id = ?",
                               (job, custom_id)).fetchone()
        if row is None or not is_answer(int(row[0]), bytes(row[1])):
            return None
        return int(row[0]), bytes(row[1])

    def add_answers(self, job: str, answers: list[Answer]) -> int:
        """Store answers not stored yet: a 200 stays for good; a writing-level failure (or an older version's
        refusal) gives way to a 200 imported later. Returns how many were new."""
        with self._db:
            before = self._db.total_changes
            self._db.executemany("INSERT INTO answered VALUES (?, ?, ?, ?, ?) ON CONFLICT (job, custom_id) DO UPDATE "
                                 "SET status = excluded.status, body = excluded.body, source = excluded.source "
                                 "WHERE answered.status != 200 AND excluded.status = 200",
                                 [(job, a.custom_id, a.status, a.body, a.source) for a in answers])
            return self._db.total_changes - before

    def add_round(self, job: str, number: int, file: Path, models: Mapping[str, str],
                  identity: Identified | None = None) -> None:
        """Record a round's custom_ids (and, with the first round, what the job asks: `identity`)."""
        with self._db:
            if identity is not None and identity.identity is not None:
                self._db.execute("INSERT OR IGNORE INTO jobs VALUES (?, ?, ?, ?, ?)",
                                 (job, identity.run_id, identity.identity.digest,
                                  json.dumps(identity.identity.settings, ensure_ascii=False),
                                  identity.identity.command))
            self._db.executemany("INSERT OR REPLACE INTO exported VALUES (?, ?, ?, ?, ?)",
                                 [(job, key, model, number, str(file)) for key, model in models.items()])


