"""HTML report on hand-made judgments: numbers equal the leaderboard's, text escaped, provenance shown, no keys."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.errors import DataError
from howtobench.judges.base import Judgment, LeafResult, SampleResult
from howtobench.llm.types import Usage
from howtobench.report.html import SMOKE_BANNER, ReportOptions, build_report
from howtobench.report.html_inputs import scrub
from howtobench.report.html_views import heat_colour
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from howtobench.report.render import cell_records, fmt
from howtobench.run import RunSettings, run_benchmark
from howtobench.steps.settings import Execution, Selection

XSS = "<script>alert(1)</script>"
SECRET = "sk-test-THIS-MUST-NOT-LEAK-123456"
ITEMS = {  # item -> (task, genre)
    "infer_1": ("completion", "prose"),
    "infer_2": ("guide", "letters"),
    "infer_3": ("open", "prose"),
}


def _leaf(name: str, node: str, score: float | None, **kw: object) -> LeafResult:
    reason = kw.pop("reason", f"{name} reason")
    return LeafResult(name=name, node=node, score=score, raw_score=score, reason=reason, **kw)  # type: ignore[arg-type]


def _j(model: str, item: str, score: float | None, status: str = "ok", leaves: list[LeafResult] | None = None,
       **nodes: float) -> Judgment:
    task, genre = ITEMS[item]
    return Judgment(method="tow", item_id=item, model=model, task=task, genre=genre, score=score,
                    status=status, nodes=dict(nodes), leaves=leaves or [], judge_model="judge-x",  # type: ignore[arg-type]
                    tree_hash="tree123", prompt_hash="prompt456", usage=Usage(calls=3, prompt_tokens=100))


def hand_made() -> list[Judgment]:
    ok_leaves = [_leaf("clarity", "content", 7.0, reason=f"nice {XSS} & more"), _leaf("heading", "format", 5.0)]
    failed_leaves = [
        _leaf("clarity", "content", None, status="failed", reason=None, error="score 'eleven' is not one of 1..10",
              raw_text='{"score": "eleven", "why": "<b>bold</b>"}'),
        _leaf("heading", "format", 5.0),
    ]
    return [
        _j("alpha", "infer_1", 8.0, content=8.0, impression=7.0).model_copy(update={"samples": [
            SampleResult(index=0, score=8.0), SampleResult(index=1, status="failed", error="unreadable")]}),
        _j("alpha", "infer_2", 7.0, leaves=ok_leaves, content=7.0, format=6.0, impression=8.0),
        _j("alpha", "infer_3", 5.0, content=4.0, format=6.0, impression=5.0),
        _j("beta", "infer_1", 5.0, content=5.0, impression=5.0),
        _j("beta", "infer_2", None, status="failed", leaves=failed_leaves),
        _j("beta", "infer_3", 1.0, status="empty", content=1.0, format=1.0, impression=1.0),
    ]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A tiny benchmark folder in the release layout (instructions only; the run dir holds the writings)."""
    root = tmp_path / "bench"
    labels = {"prose": "散文", "letters": "书信"}
    for item, (task, genre) in ITEMS.items():
        row = {"infer_id": item, "task_type": task, "sub_task": labels[genre], "reference": f"ref of {item}",
               "basic_instruction": f"Write about {item} {XSS}", "information": ""}
        path = root / task / "aligned.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return root


@pytest.fixture
def run_dir(tmp_path: Path, bench: Path) -> Path:
    run = tmp_path / "run"
    _write_jsonl(run / "judgments" / "tow.jsonl", [j.model_dump(mode="json") for j in hand_made()])
    writings = [{"infer_id": i, "model": m, "output": f"{m} writes {i}: {XSS}"} for m in ("alpha", "beta")
                for i in ITEMS if (m, i) != ("beta", "infer_3")]
    writings.append({"infer_id": "infer_3", "model": "beta", "output": ""})
    _write_jsonl(run / "writings" / "all.jsonl", writings)
    manifest = {
        "toolkit": "0.1.0", "name": "demo", "method": "tow", "smoke": False,
        "judge": {"model": "judge-x", "base_urls": ["http://127.0.0.1:9/v1"], "api_key_env": "HTB_TEST_KEY",
                  "api_key": SECRET},
        "writer": {"model": "alpha", "base_urls": ["http://127.0.0.1:8/v1"], "authorization": f"Bearer {SECRET}"},
        "tree_hashes": ["tree123"], "prompt_hashes": ["prompt456"],
        "data": {"dir": str(bench), "aligned_sha256": {"guide": "abc123sha"}},
        "seeds": {"bootstrap": 3, "sampling": 0}, "bootstrap": 200,
        "items": list(ITEMS), "judgments": 6,
        "usage": {"leaf:clarity": {"calls": 5, "prompt_tokens": 1234, "completion_tokens": 56, "cost_usd": 0.0123},
                  "total": {"calls": 7, "prompt_tokens": 2000, "completion_tokens": 80, "cost_usd": 0.0201}},
        "note_from_the_future": SECRET,
    }
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


def _text(page: str) -> str:
    """Visible text of the page with entities decoded (tags dropped), whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


class _Tables(HTMLParser):
    """Collects every <table>: its attributes and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[dict[str, str | None], list[list[str]]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append((dict(attrs), []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data + " ")


def _tables(page: str) -> list[tuple[dict[str, str | None], list[list[str]]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def test_numbers_match_the_leaderboard(run_dir: Path) -> None:
    page = build_report([run_dir])
    # the run's settings (seed 3, 200 replicates, its items); genres in the data equal the records' here
    lb = build_leaderboard(hand_made(), LeaderboardOptions(nodes=True, seed=3, n_boot=200))
    tables = {attrs["data-metric"]: rows for attrs, rows in _tables(page) if attrs.get("class") == "lb"}
    assert set(tables) == {"score", "content", "format", "impression"}
    labels = {row.key: row.label for row in lb.rows}
    checked = 0
    for rec in cell_records(lb):
        header, *body = tables[rec["metric"]]
        line = next(r for r in body if r[0] == labels[rec["row"]])
        cell = line[header.index(rec["column"])]
        if rec["mean"] is None:
            assert cell == f"failed ×{rec['n_failed']}"
        else:
            failed = f" {rec['n_failed']} failed" if rec["n_failed"] else ""
            interval = f" [{fmt(rec['ci_low'])}, {fmt(rec['ci_high'])}]" if rec["n"] > 1 else ""  # none for 1 item
            assert cell == f"{fmt(rec['mean'])}{interval} n={rec['n']}{failed}"
        checked += 1
    assert checked == len(cell_records(lb)) > 20
    score = tables["score"]
    assert score[0][1:] == ["alpha", "beta"]  # ordered by All
    # the failure is left out (not 0), and the empty writing too (the authors' convention): beta rests on 1 item
    assert score[-1][:3] == ["All", "6.67 [5.00, 8.00] n=3", "5.00 n=1 1 failed"]
    # one method only, so the counts table has no method column
    counts = next(rows for attrs, rows in _tables(page) if rows and rows[0][:2] == ["model", "judged"])
    assert counts[2][:8] == ["beta", "3", "1", "1", "1", "0", "0", "33.3%"]
    assert "beta: 1 of 3 judgments failed (33.3%)" in _text(page)  # the leaderboard's warning, at the top
    assert _text(page).index("judgments failed") < _text(page).index("— root score (tow)")


def test_run_settings_and_page_sections(run_dir: Path) -> None:
    page = build_report([run_dir])
    text = _text(page)
    assert "HoWToBench run demo (3 items)" in text
    assert "bootstrap 200 (seed 3)" in text
    for section in ('id="leaderboard"', 'id="heatmap"', 'id="nodes"', 'id="counts"', 'id="provenance"',
                    'id="explorer"'):
        assert section in page
    assert "node: content" in text and "node: impression" in text
    nodes = next(rows for attrs, rows in _tables(page) if attrs.get("class") == "lb nodes")
    lb = build_leaderboard(hand_made(), LeaderboardOptions(nodes=True, seed=3, n_boot=200))
    content = lb.cell("content", "all", "alpha")
    assert content is not None and content.ci_low is not None and content.ci_high is not None
    assert [r[0] for r in nodes] == ["node (All)", "content", "format", "impression"]
    assert nodes[1][1] == f"{fmt(content.mean)} [{fmt(content.ci_low)}, {fmt(content.ci_high)}]"
    # per-leaf failure rates: clarity failed once out of two, heading never
    assert "clarity 0/1 (0%) 1/1 (100%)" in text
    assert "heading 0/1 (0%) 0/1 (0%)" in text
    heat = next(rows for attrs, rows in _tables(page) if attrs.get("class") == "heat")
    # beta's prose mean leaves its empty writing out (the authors' convention)
    assert heat == [["genre", "alpha", "beta"], ["Prose", "6.50", "5.00"], ["Letters", "7.00", "failed ×1"]]
    assert "background: #08306b" in page  # the highest mean in the deepest colour


def test_everything_untrusted_is_escaped(run_dir: Path) -> None:
    page = build_report([run_dir])
    assert XSS not in page
    assert "<b>bold</b>" not in page
    escaped = html.escape(XSS, quote=False)
    assert page.count(escaped) >= 5  # instruction, writings, leaf reason
    assert "alpha writes infer_1: " + escaped in page
    assert "Write about infer_1 " + escaped in page
    assert "nice " + escaped + " &amp; more" in page
    assert page.count("<script>") == 1  # only the page's own sorting/filtering script


def test_failures_and_empties_shown_as_such(run_dir: Path) -> None:
    page = build_report([run_dir])
    text = _text(page)
    assert "score 'eleven' is not one of 1..10" in text
    assert '{"score": "eleven", "why": "<b>bold</b>"}' in text  # the raw reply, shown (escaped) not parsed
    assert '<span class="badge failed">failed</span>' in page
    assert "empty writing" in text
    assert "Samples: #0: 8.00 (ok) · #1: — (failed)" in text
    # problem items first in the explorer
    order = re.findall(r'<article class="item( problem)?" data-problem="(\d)">\s*<h3>(infer_\d)</h3>', page)
    assert [o[2] for o in order] == ["infer_2", "infer_3", "infer_1"]
    assert [o[1] for o in order] == ["1", "1", "0"]


def test_weight_repairs_shown_next_to_failures(run_dir: Path) -> None:
    path = run_dir / "judgments" / "tow.jsonl"
    note = "format: weights {'plots': 0.0} sum to ~0 after clipping; used uniform 1/3"
    rows = [j.model_copy(update={"weight_repairs": [note]}) if (j.model, j.item_id) == ("alpha", "infer_2") else j
            for j in hand_made()]
    path.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    page = build_report([run_dir])
    header, *body = next(rows for attrs, rows in _tables(page) if rows and rows[0][:2] == ["model", "judged"])
    shown = {line[0]: dict(zip(header, line, strict=True)) for line in body}
    assert (shown["alpha"]["weights repaired"], shown["alpha"]["failed"]) == ("1", "0")
    assert (shown["beta"]["weights repaired"], shown["beta"]["failed"]) == ("0", "1")
    assert "alpha: the edge weights of 1 of 3 judgments were repaired" in _text(page)


def test_manifest_shown_without_secrets(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTB_TEST_KEY", SECRET)
    page = build_report([run_dir])
    text = _text(page)
    assert SECRET not in page
    assert "HTB_TEST_KEY" in text  # the variable's name is fine, its value is never read
    assert "http://127.0.0.1:9/v1" in text and "judge endpoint" in text and "writer endpoint" in text
    assert "tree123" in text and "prompt456" in text and "abc123sha" in text
    assert "leaf:clarity 5 0 1,234 56 0.0123" in text
    assert "total 7 0 2,000 80 0.0201" in text


def test_scrub_masks_key_like_values() -> None:
    cleaned = scrub({"a": {"api_key": "x", "Token": "y", "b": [f"Bearer {SECRET}", "plain"]}, "c": SECRET})
    assert cleaned == {"a": {"b": ["[redacted]", "plain"]}, "c": "[redacted]"}


def test_the_report_embeds_the_cjk_glyphs_it_uses(tmp_path: Path) -> None:
    """A machine without a CJK font showed boxes for every Chinese word (issue 40: the page now carries its glyphs,
    and says so; tests/report/test_report_font.py checks the font itself)."""
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    page = build_report([path], ReportOptions(seed=0, n_boot=10, explorer_limit=1))
    assert "Chinese on this page is drawn with an embedded subset of Noto Sans CJK SC (" in _text(page)
    assert '@font-face { font-family: "Howtobench CJK"; font-display: block; src: url(data:font/woff;base64,' in page
    assert "font-src data:;" in page


def test_plain_files_without_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOWTOBENCH_DATA", raising=False)  # else the page finds the benchmark there, as it should
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    page = build_report([path], ReportOptions(seed=0, n_boot=100, explorer_limit=1))
    text = _text(page)
    assert "HoWToBench report" in text
    assert "1 of 3 items shown" in text and "pass --data" in text
    assert "Writings are not shown" in text
    assert "tree123" in text  # provenance from the judgments themselves


def test_cli_writes_the_page(run_dir: Path, tmp_path: Path, bench: Path) -> None:
    out = tmp_path / "out" / "report.html"
    result = CliRunner().invoke(app, ["report", str(run_dir), "-o", str(out), "--seed", "5", "--data", str(bench)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "bootstrap 200 (seed 5)" in _text(page)
    assert XSS not in page


def test_heat_colour_runs_light_to_dark() -> None:
    assert heat_colour(0.0) == ("#deebf7", "#1b1f24")
    assert heat_colour(1.0) == ("#08306b", "#ffffff")


def test_release_writings_and_instructions_from_the_benchmark(tmp_path: Path, bench_root: Path) -> None:
    """With --data, the explorer shows the real instruction and the shipped writing of a judged item (escaped)."""
    rows = [json.loads(line) for line in (bench_root / "guide" / "aligned.jsonl").read_text("utf-8").splitlines()[:2]]
    judged = [Judgment(method="rouge", item_id=r["infer_id"], model="deepseek-r1", task="guide", genre="others",
                       score=0.25, meta={"p": 0.30652, "tokenizer": "jieba", "nested": {"x": 1}}) for r in rows]
    path = tmp_path / "rouge.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in judged), encoding="utf-8")
    page = build_report([path], ReportOptions(data_dir=bench_root, n_boot=50))
    release = bench_root / "guide" / "inferences" / "deepseek-r1.jsonl"
    texts = {w["infer_id"]: w["output"] for w in map(json.loads, release.read_text("utf-8").splitlines())}
    for r in rows:
        assert str(escape(r["basic_instruction"])) in page
        assert str(escape(texts[r["infer_id"]])) in page
    assert "2 of 2 items shown" in _text(page)
    assert "p 0.307 · tokenizer jieba" in _text(page) and "nested" not in _text(page)  # scalars only


def test_smoke_run_says_so_once(run_dir: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    (run_dir / "manifest.json").write_text(json.dumps({**manifest, "smoke": True}), encoding="utf-8")
    page = build_report([run_dir])
    assert page.count(SMOKE_BANNER) == 1
    assert "SMOKE · HoWToBench run demo" in _text(page)


def test_failed_generation_lists_are_not_read_as_writings(run_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    _write_jsonl(run_dir / "writings" / "alpha.failed.jsonl",
                 [{"infer_id": "infer_1", "model": "alpha", "error": "empty answer", "raw_text": ""}])
    with caplog.at_level(logging.WARNING):
        build_report([run_dir])
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_unfinished_run_and_bad_paths(run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "manifest.json").unlink()  # a run killed before its manifest: the judgments still make a page
    page = build_report([run_dir], ReportOptions(data_dir=tmp_path / "bench"))
    assert "HoWToBench report" in _text(page) and 'id="explorer"' in page
    with pytest.raises(DataError, match="not a run directory"):
        build_report([tmp_path / "bench"])
    with pytest.raises(DataError, match="no such results file"):
        build_report([tmp_path / "missing.jsonl"])
    result = CliRunner().invoke(app, ["report", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.html")])
    assert result.exit_code != 0 and not (tmp_path / "x.html").exists()


async def test_a_run_writes_its_report(tmp_path: Path, bench_root: Path) -> None:
    """`howtobench run` leaves report.html in its directory, agreeing with its leaderboard.json (ROUGE: no calls)."""
    settings = RunSettings(
        name="rouge-report", run_dir=tmp_path / "run", method="rouge", generate=False, bootstrap=100, paper=False,
        selection=Selection(data_dir=bench_root, limit=2, tasks=("guide",),
                            models=("deepseek-r1", "gpt-4o-2024-11-20")),
        execution=Execution(workspace=tmp_path / "ws", progress=False),
        judge=EndpointConfig(model="unused", base_urls=("http://127.0.0.1:9/v1",)),
    )
    await run_benchmark(settings)
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    board = json.loads((tmp_path / "run" / "leaderboard.json").read_text(encoding="utf-8"))
    header, *body = next(rows for attrs, rows in _tables(page) if attrs.get("data-metric") == "score")
    for cell in board["cells"]:
        label = next(r["label"] for r in board["rows"] if r["key"] == cell["row"])
        shown = next(r for r in body if r[0] == label)[header.index(cell["column"])]
        assert shown == f"{fmt(cell['mean'], 4)} [{fmt(cell['ci_low'], 4)}, {fmt(cell['ci_high'], 4)}] n={cell['n']}"
    assert "rouge-report" in _text(page) and "2 of 2 items shown" in _text(page)


class _Head(HTMLParser):
    """The CSP of the page's <meta http-equiv> and the exact text of each inline <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.csp: str | None = None
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = a.get("content")
        if tag == "script":
            assert "src" not in a, "the page loads no script file"
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def _csp(page: str) -> tuple[dict[str, list[str]], list[str]]:
    head = _Head()
    head.feed(page)
    assert head.csp is not None
    directives = {}
    for part in head.csp.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives, head.scripts


def test_csp_allows_exactly_the_page_script_by_its_hash(run_dir: Path) -> None:
    """script-src names the sha256 of the one inline script as served, never 'unsafe-inline'."""
    directives, scripts = _csp(build_report([run_dir]))
    assert len(scripts) == 1 and "addEventListener" in scripts[0]
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
    assert directives["script-src"] == [f"'sha256-{digest}'"]
    assert directives["default-src"] == ["'none'"]
    assert "'unsafe-inline'" not in directives["script-src"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_script_runs_sorts_and_filters(run_dir: Path, tmp_path: Path) -> None:
    """The hashed script, as the page serves it, runs: a click sorts a table, typing filters the explorer
    (a minimal stand-in DOM under node; no browser is installed here)."""
    _, scripts = _csp(build_report([run_dir]))
    harness = tmp_path / "harness.js"
    harness.write_text(NODE_HARNESS.replace("/*SCRIPT*/", scripts[0]), encoding="utf-8")
    out = subprocess.run(["node", str(harness)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"sorted": ["a", "b", "c"], "reversed": ["c", "b", "a"], "shown": ["", "none"]}


NODE_HARNESS = r"""
function el(text) { return { textContent: text, style: {}, dataset: {}, listeners: {},
  addEventListener(k, f) { this.listeners[k] = f; } }; }
const rows = ["b", "c", "a"].map(t => ({ cells: [el(t)] }));
const body = { rows: rows.slice(), appendChild(r) { this.rows.splice(this.rows.indexOf(r), 1); this.rows.push(r); } };
const th = el("model");
const table = { tBodies: [body], querySelectorAll: () => [th] };
const articles = [el("alpha writes"), el("beta writes")];
const ids = { filter: el(""), "only-problems": el(""), expand: el(""), collapse: el("") };
ids.filter.value = ""; ids["only-problems"].checked = false;
globalThis.document = {
  querySelectorAll(sel) { return sel === "table.sortable" ? [table] : sel === "article.item" ? articles : []; },
  getElementById(id) { return ids[id]; },
};
/*SCRIPT*/
th.listeners.click(); const sorted = body.rows.map(r => r.cells[0].textContent);
th.listeners.click(); const reversed = body.rows.map(r => r.cells[0].textContent);
ids.filter.value = "ALPHA"; ids.filter.listeners.input();
console.log(JSON.stringify({ sorted, reversed, shown: articles.map(a => a.style.display) }));
"""
