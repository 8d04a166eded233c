"""A real `howtobench rate serve` process and Debian's headless Chromium driving it, for the rater's-path tests.

The browser is started by tests/chromium.py (shared with the report's font test): Debian's, nothing downloaded;
the tests are skipped without it, except on CI, where a missing browser is a failure.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 15.0


class ServeProcess:
    """`howtobench rate serve --port 0` in its own process; `url` is read from the line it prints."""

    def __init__(self, study: Path, data: Path, writings: Path | None = None) -> None:
        args = [sys.executable, "-m", "howtobench", "rate", "serve", "--study", str(study), "--data", str(data),
                "--port", "0"]
        if writings is not None:
            args += ["--writings", str(writings)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = self._read_url()

    def _read_url(self) -> str:
        deadline = time.monotonic() + 60
        seen = []
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "rating app for study" in line:
                return line.rsplit(" ", 1)[1].strip().rstrip("/")
        self.proc.kill()
        raise AssertionError("rate serve did not start:\n" + "".join(seen))

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when the machine or the terminal dies."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)


class Rater:
    """What a person does on the page, step by step, waiting for the page to confirm each save."""

    def __init__(self, driver: Any, url: str) -> None:
        self.driver = driver
        self.url = url

    def sign_in(self, name: str) -> None:
        self.driver.get(self.url + "/")
        box = self.driver.find_element(By.ID, "name")
        box.clear()
        box.send_keys(name)
        self.driver.find_element(By.ID, "signin").click()
        self.wait_for(lambda d: d.find_element(By.ID, "rater-name").text == name)

    def sign_out(self) -> None:
        self.driver.find_element(By.ID, "signout").click()
        self.wait_for(lambda d: d.find_elements(By.ID, "signin"))

    def wait_for(self, condition: Any) -> Any:
        """Poll `condition` until it holds. An element read while the page is being replaced (after a click that
        loads the next instruction) is stale or not there yet: that is "not yet", not a failure (the test failed
        now and then with StaleElementReferenceException in `next_instruction`)."""
        return WebDriverWait(self.driver, WAIT, ignored_exceptions=(NoSuchElementException,
                                                                    StaleElementReferenceException)).until(condition)

    def response(self, letter: str) -> Any:
        return self.driver.find_element(By.ID, f"response-{letter}")

    def rate(self, letter: str, score: int, errors: tuple[str, ...] = (), comment: str = "") -> None:
        """Choose a score (and error types, a comment) for one response; wait until the page says saved."""
        section = self.response(letter)
        section.find_element(By.CSS_SELECTOR, f'input[name="score"][value="{score}"]').click()
        for error in errors:
            section.find_element(By.CSS_SELECTOR, f'input[name="error_types"][value="{error}"]').click()
        if comment:
            box = section.find_element(By.CSS_SELECTOR, "textarea")
            box.send_keys(comment)
            section.find_element(By.CSS_SELECTOR, "legend").click()  # leave the box: a change event
        self.wait_for(lambda d: self.status(letter) == "saved")

    def status(self, letter: str) -> str:
        return str(self.response(letter).find_element(By.CSS_SELECTOR, ".status").text)

    def chosen_score(self, letter: str) -> int | None:
        for box in self.response(letter).find_elements(By.CSS_SELECTOR, 'input[name="score"]'):
            if box.is_selected():
                return int(box.get_attribute("value"))
        return None

    def comment(self, letter: str) -> str:
        return str(self.response(letter).find_element(By.CSS_SELECTOR, "textarea").get_attribute("value"))

    def item_id(self) -> str:
        return str(self.driver.find_element(By.ID, "item-id").text)

    def next_instruction(self) -> None:
        before = self.item_id()
        self.driver.find_element(By.ID, "next").click()
        self.wait_for(lambda d: d.find_elements(By.ID, "all-done") or self.item_id() != before)
