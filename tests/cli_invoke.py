"""The CLI as a user runs it: the `invoke` fixture (registered by tests/cli/conftest.py) calls the console entry point
and returns (exit status, what it printed)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from howtobench.cli.main import main

Invoke = Callable[[list[str]], tuple[int, str]]


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    """`howtobench ARGS` (errors turned into their line and status by `main`) on an 80-column terminal:
    (exit status, stdout + stderr)."""
    monkeypatch.setenv("COLUMNS", "80")

    def call(args: list[str]) -> tuple[int, str]:
        monkeypatch.setattr("sys.argv", ["howtobench", *args])
        with pytest.raises(SystemExit) as info:
            main()
        printed = capsys.readouterr()
        return int(info.value.code or 0), printed.out + printed.err

    return call
