"""Debian's headless Chromium for the browser tests (the rating app's, tests/rate/browser.py; the report's font,
tests/report/test_report_font_browser.py): one start-up for both.

The browser is the system one (/usr/bin/chromium through /usr/bin/chromedriver, installed by scripts/setup-env);
nothing is downloaded. Without them the tests are skipped, except on CI (CI=true), where a missing browser is a
failure. Import it only after `pytest.importorskip("selenium")`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def need_browser() -> None:
    """Skip the test (fail it on CI) when Debian's chromium or chromedriver is missing."""
    if CHROMIUM.is_file() and CHROMEDRIVER.exists():
        return
    message = "Debian's chromium and chromium-driver are not installed (scripts/setup-env installs them as root)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def start_chromium(profile: Path, flags: Iterable[str] = (), env: dict[str, str] | None = None) -> Any:
    """A headless Chromium with a fresh profile (in `profile`, an empty folder) on this closed network; `flags` are
    added to FLAGS, `env` is chromedriver's (and so the browser's) environment (default: this process's)."""
    need_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, *flags):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER), env=env), options=options)
