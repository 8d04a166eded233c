"""The report in a real browser (issue 40, 5): Debian's headless Chromium, with fontconfig shown no CJK font at all,
draws the page's Chinese with the embedded font (a control page without it draws none), and at 390 px wide the bars
stay visible and wide tables scroll inside their box instead of the page.

Chromium is asked which fonts drew a node (DevTools' CSS.getPlatformFontsForNode): a web font is `isCustomFont`.
Screenshots go to $HOWTOBENCH_SCREENS (else the test's temporary folder) for a person to look at.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="the [dev] extra installs selenium (the browser tests)")

from chromium import start_chromium
from howtobench.fonts import CORE_CJK_FONT as ASSET
from howtobench.judges.base import Judgment, LeafResult
from howtobench.report.html import ReportOptions, build_report

pytestmark = pytest.mark.browser

MODELS = ("claude-3-5-sonnet-20241022", "deepseek-r1", "gpt-4o-2024-11-20")
LATIN_ONLY = Path("/usr/share/fonts/truetype/dejavu")
REASON = "文章结构清晰，论证层层递进，但部分段落的过渡略显生硬，结尾的升华与前文呼应不够紧密。" * 2


def _judgment(model: str, item: str, k: int) -> Judgment:
    leaves = [LeafResult(name=name, node=node, score=float(4 + (k + i) % 5), raw_score=float(4 + (k + i) % 5),
                         reason=REASON) for i, (name, node) in enumerate((("logic", "content"),
                                                                            ("paragraphing", "format")))]
    return Judgment(method="tow", item_id=item, model=model, task="guide", genre="argumentative",
                    score=5.0 + k * 0.7, status="ok", nodes={"content": 5.0 + k, "format": 6.0}, leaves=leaves,
                    judge_model="gpt-4o-2024-11-20")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, bench_root: Path) -> tuple[Path, Path]:
    """A report of shipped Chinese writings (two guide items, three models) and a control copy whose only change is
    that its @font-face rule is gone."""
    folder = tmp_path_factory.mktemp("report")
    with (bench_root / "guide" / "aligned.jsonl").open(encoding="utf-8") as rows:
        items = [json.loads(next(rows))["infer_id"] for _ in range(2)]
    judged = folder / "tow.jsonl"
    judged.write_text("".join(_judgment(m, it, k).model_dump_json() + "\n"
                              for k, m in enumerate(MODELS) for it in items), encoding="utf-8")
    page = build_report([judged], ReportOptions(data_dir=bench_root, seed=0, n_boot=50))
    control = re.sub(r"@font-face \{[^}]*\}", "", page, count=1)
    assert control != page
    (folder / "report.html").write_text(page, encoding="utf-8")
    (folder / "control.html").write_text(control, encoding="utf-8")
    return folder / "report.html", folder / "control.html"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium whose fontconfig knows only a Latin font folder: a machine without CJK fonts."""
    home = tmp_path_factory.mktemp("chromium")
    conf = home / "fonts.conf"
    fonts = f"<dir>{LATIN_ONLY}</dir>" if LATIN_ONLY.is_dir() else ""
    conf.write_text(f'<?xml version="1.0"?><fontconfig>{fonts}<cachedir>{home / "fc-cache"}</cachedir></fontconfig>',
                    encoding="utf-8")
    driver = start_chromium(home / "profile", ("--hide-scrollbars",), {**os.environ, "FONTCONFIG_FILE": str(conf)})
    try:
        yield driver
    finally:
        driver.quit()


def _open(driver: Any, page: Path, width: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    driver.get(page.as_uri())
    driver.execute_script("return document.fonts.ready.then(() => true)")


def _fonts_of(driver: Any, selector: str) -> list[dict[str, Any]]:
    """The fonts Chromium drew the text of the first `selector` node with."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, selector
    return list(driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"])


def _shot(driver: Any, selector: str, name: str, tmp: Path) -> Path:
    folder = Path(os.environ.get("HOWTOBENCH_SCREENS") or tmp)
    folder.mkdir(parents=True, exist_ok=True)
    driver.execute_script("document.querySelector(arguments[0]).scrollIntoView()", selector)
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


INSTRUCTION = "article.item pre.text"


@pytest.mark.parametrize("width", [1280, 390])
def test_chinese_is_drawn_with_the_embedded_font_and_not_without_it(chromium: Any, pages: tuple[Path, Path],
                                                                    width: int, tmp_path: Path) -> None:
    report, control = pages
    _open(chromium, report, width)
    loaded = chromium.execute_script(
        "return Array.from(document.fonts).map(f => [f.family, f.status])")
    assert ['"Howtobench CJK"', "loaded"] in loaded or ["Howtobench CJK", "loaded"] in loaded, loaded
    drawn = _fonts_of(chromium, INSTRUCTION)
    custom = [f for f in drawn if f["isCustomFont"]]
    assert custom and sum(f["glyphCount"] for f in custom) > 20, drawn  # the instruction's hanzi
    assert _shot(chromium, INSTRUCTION, f"report-{width}", tmp_path).stat().st_size > 0
    _open(chromium, control, width)
    drawn = _fonts_of(chromium, INSTRUCTION)
    assert not [f for f in drawn if f["isCustomFont"]], drawn  # nothing else could draw them: boxes
    _shot(chromium, INSTRUCTION, f"control-{width}", tmp_path)


def test_at_390_px_the_bars_show_and_wide_tables_scroll_in_their_box(chromium: Any, pages: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    report, _ = pages
    _open(chromium, report, 390)
    chromium.execute_script("document.getElementById('expand').click()")  # every judgment open: the leaf tables
    page_width = chromium.execute_script("return document.documentElement.scrollWidth")
    assert page_width <= 390, page_width  # the page itself never scrolls sideways
    tracks = chromium.execute_script(
        "return Array.from(document.querySelectorAll('.bars .track')).map(t => t.getBoundingClientRect().width)")
    fills = chromium.execute_script(
        "return Array.from(document.querySelectorAll('.bars .fill')).map(t => t.getBoundingClientRect().width)")
    assert len(tracks) == len(MODELS) and min(tracks) >= 150 and min(fills) > 0, (tracks, fills)
    boxes = chromium.execute_script("""return Array.from(document.querySelectorAll('.scroll, .leaves-box')).map(
        b => [b.getBoundingClientRect().right, b.scrollWidth, b.clientWidth])""")
    assert boxes and all(right <= 390 for right, _, _ in boxes), boxes
    assert any(inner > outer for _, inner, outer in boxes), boxes  # a wide table scrolls inside its box
    leaves = chromium.execute_script(
        "return Array.from(document.querySelectorAll('table.leaves')).map(t => t.closest('.leaves-box') !== null)")
    assert leaves and all(leaves)
    _shot(chromium, "#leaderboard", "report-390-leaderboard", tmp_path)
    _shot(chromium, "table.leaves", "report-390-leaves", tmp_path)


def test_the_whole_shipped_font_loads_as_the_rating_app_serves_it(chromium: Any, pages: tuple[Path, Path]) -> None:
    """The rating app serves assets/cjk-sc-subset.woff whole: Chromium's font sanitizer accepts it."""
    data = base64.b64encode(resources.files("howtobench").joinpath(ASSET).read_bytes()).decode("ascii")
    _open(chromium, pages[0], 1280)
    status = chromium.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const bytes = Uint8Array.from(atob(arguments[0]), c => c.charCodeAt(0));
        new FontFace("Whole", bytes).load().then(f => done([f.status, document.fonts.add(f).check("16px Whole", "春")]),
                                                 e => done(["error", String(e)]));""", data)
    assert status == ["loaded", True], status
