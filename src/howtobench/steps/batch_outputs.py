"""Reading an engine's batch output files into a batch-files job (`--batch-import`; see `steps/batch_files.py`).

Everything is checked before anything is stored, and a problem that says the file is not this job's output stops
the import with one line naming file and line: another selection or settings of the job (`check_same_job`, before
any file is read), a custom_id this job never exported, one answered twice, a reply from another model (the same
name, or a dated snapshot of it: `same_model`), bytes that are not UTF-8, a line that is not a JSON object.

A line that is not an answer is never stored (`batch_store.is_answer`): the engine did not run it (no response,
429, 5xx), refused it (a 4xx that is not about the writing), or answered 200 with a body that is no chat
completion. Such lines are counted and reported; their calls go into the next round's file, and a corrected output
imported later answers them. (Storing them was a poison: the first stored line of a call stays, so the corrected
output changed nothing and the job could never finish.) A prompt too long for the model and a content filter's
refusal are facts about the writing, answered the same live: they are stored (docs/fidelity.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from howtobench import strict_json
from howtobench.errors import DataError, RowError
from howtobench.steps.batch_store import Answer, FileStore, Identified, is_answer
from howtobench.steps.job_identity import differences, import_command

NOT_RUN = frozenset({429, 500, 502, 503, 504})  # answers of a request the engine did not really run: asked again
SHOWN = 5  # lines that are not answers reported one by one per import; the rest are counted
# A dated snapshot's suffix: -2024-07-18 or -20240718 (OpenAI, Anthropic), -0613 (OpenAI's older MMDD snapshots).
_DATE = re.compile(r"-(?:(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])|(?:19|20)\d\d(?:0[1-9]|1[0-2])"
                   r"(?:0[1-9]|[12]\d|3[01])|(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))")


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-empty line; a line that is not UTF-8 or no JSON object is an error
    naming it."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the batch output: {exc}") from exc
    with handle:
        for number, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RowError(path, number, f"not UTF-8 text (byte {raw[exc.start]:#04x} at column "
                                             f"{exc.start + 1}): not a line of a batch output") from None
            if not text.strip():
                continue
            try:
                line = strict_json.loads(text)
            except ValueError as exc:
                raise RowError(path, number, f"not a JSON line of a batch output ({exc})") from None
            if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                raise RowError(path, number, "no custom_id: not a line of an OpenAI batch output file")
            yield number, line


def same_model(answered: Any, exported: str) -> bool:
    """The reply's model is the one asked: the same name, or that name and a date suffix — a dated snapshot, as
    OpenAI answers a request for gpt-4o-mini as gpt-4o-mini-2024-07-18. Never a prefix: gpt-4o-mini is not
    gpt-4o, nor Qwen2.5-7B-Instruct Qwen2.5-7B."""
    if not isinstance(answered, str):
        return False
    if answered == exported:
        return True
    return answered.startswith(exported) and _DATE.fullmatch(answered[len(exported):]) is not None


def _error_text(line: dict[str, Any], response: dict[str, Any]) -> str:
    """The error a line carries: its `error` (a string, or an object with a message), else its body's error."""
    body = response.get("body")
    error = line.get("error") or (body.get("error") if isinstance(body, dict) else None)
    if isinstance(error, dict):
        inner = error.get("error", error)
        return str(inner.get("message", inner) if isinstance(inner, dict) else inner)
    return str(error) if error else "no response"


def _has_content(body: dict[str, Any]) -> bool:
    choices = body.get("choices")
    return (isinstance(choices, list) and bool(choices) and isinstance(choices[0], dict)
            and isinstance((choices[0].get("message") or {}).get("content"), str))


def _answer(path: Path, number: int, line: dict[str, Any], model: str) -> Answer | tuple[str, str]:
    """The answer an output line gives its call, or (kind, why) when it is none: "not run", "refused" or
    "malformed" (the call goes into the next round). A reply of another model stops the import."""
    key, where = line["custom_id"], f"{path}:{number}"
    given = line.get("response")
    response: dict[str, Any] = given if isinstance(given, dict) else {}
    status = response.get("status_code") if type(response.get("status_code")) is int else None
    body = response.get("body")
    if status == 200 and not line.get("error"):
        if not isinstance(body, dict):
            return "malformed", f"HTTP 200 with a body that is no JSON object ({type(body).__name__})"
        if not same_model(body.get("model"), model):
            raise RowError(path, number, f"the reply to custom_id {key[:12]} comes from model {body.get('model')!r}, "
                           f"but the call was exported for {model!r}: an output of another model's run (only the "
                           "same name, or it with a date suffix such as -2024-07-18, is the same model)")
        if not _has_content(body):
            return "malformed", "HTTP 200 without choices[0].message.content"
        return Answer(key, 200, json.dumps(body, ensure_ascii=False).encode(), where)
    message = _error_text(line, response)
    if status is None or status in NOT_RUN:
        return "not run", f"{status or 'no response'}: {message}"
    error = json.dumps({"error": {"message": f"{where}: {message}"}}, ensure_ascii=False).encode()
    if status != 200 and is_answer(status, error):
        return Answer(key, status, error, where)  # the prompt too long, a content filter: the writing's failure
    return "refused", f"HTTP {status}: {message}"


def check_same_job(store: FileStore, job: Identified, paths: tuple[Path, ...]) -> None:
    """Refuse, before any file is read, an import into a job that exported nothing while the same output has an
    export of other settings or another selection: name what differs and the command that matches the export."""
    if job.identity is None or store.exported(job.key):
        return
    others = store.other_jobs(job)
    if not others:
        return
    settings, command = others[-1]
    what = "; ".join(differences(settings, job.identity.settings)) or "its settings"
    names = ", ".join(str(p) for p in paths)
    matching = import_command(command, paths)
    raise DataError(f"{names} answer the batch export of another job for {job.run_id} ({what}); nothing was "
                    "imported: " + (f"run the export's command with --batch-import: {matching}" if matching else
                                    "run this command with the options of the export"))


def _whose(store: FileStore, key: str) -> str:
    other = store.owner(key)
    return f" (it is {other.split('#')[0]}'s)" if other else ""


def read_outputs(store: FileStore, job: Identified, paths: tuple[Path, ...],
                 report: Callable[[str], None]) -> list[Answer]:
    """Every answer of `paths`, checked against what `job` exported (see the module docstring); raises on the
    first problem, naming file and line, before anything is stored. Lines that are no answer are reported."""
    check_same_job(store, job, paths)
    exported = store.exported(job.key)
    if not exported:
        raise DataError(f"nothing was exported by this job ({job.run_id}): run it with --batch-export FILE first, "
                        "with the same options and output")
    seen: dict[str, str] = {}
    answers: list[Answer] = []
    skipped: Counter[str] = Counter()
    for path in paths:
        lines = list(_lines(path))
        if lines and not any(line["custom_id"] in exported for _, line in lines):
            raise DataError(f"{path} answers another job's calls: none of its {len(lines)} custom_ids was exported "
                            f"by {job.run_id}" + _whose(store, lines[0][1]["custom_id"]).replace("it is", "they are"))
        for number, line in lines:
            key = line["custom_id"]
            if key not in exported:
                raise RowError(path, number, f"custom_id {key[:12]} was not exported by {job.run_id}"
                               + _whose(store, key))
            if key in seen:
                raise RowError(path, number, f"custom_id {key[:12]} is answered twice (first at {seen[key]})")
            seen[key] = f"{path}:{number}"
            found = _answer(path, number, line, exported[key])
            if isinstance(found, Answer):
                answers.append(found)
                continue
            skipped[found[0]] += 1
            if sum(skipped.values()) <= SHOWN:
                report(f"{path}:{number}: custom_id {key[:12]} is not an answer ({found[0]}: {found[1]}); it goes "
                       "into the next round's file")
    if skipped:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in skipped.most_common())
        report(f"{sum(skipped.values()):,} lines are not answers ({kinds}): not stored; their calls go into the next "
               "round's file (import a corrected output to answer them)")
    return answers


def import_outputs(store: FileStore, job: Identified, paths: tuple[Path, ...],
                   report: Callable[[str], None]) -> None:
    """Check and store the answers of `paths` for `job`, saying how many were new."""
    answers = read_outputs(store, job, paths, report)
    new = store.add_answers(job.key, answers)
    names = ", ".join(str(p) for p in paths)
    report(f"imported {new:,} answers from {names}" + (f" ({len(answers) - new:,} were imported before: "
                                                        "nothing changes for them)" if len(answers) > new else ""))
