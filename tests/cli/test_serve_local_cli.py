"""`howtobench llm serve-local --port`: a fixed URL for tools pointed at the embedded model (no model is run here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.llm import local


class Started(Exception):
    """Raised by the stand-in for the server process once its command line is known."""


def test_serve_local_listens_on_the_port_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []

    def start(command: list[str], base_url: str, log: Path) -> None:
        commands.append([*command, base_url])
        raise Started

    monkeypatch.setattr(local.ServerProcess, "start", staticmethod(start))
    monkeypatch.setattr(local, "model_file", lambda: tmp_path / "model.gguf")
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: object())  # as if [local] were installed
    for args, fixed in ((["--port", "18999"], True), ([], False)):
        result = CliRunner().invoke(app, ["llm", "serve-local", *args])
        assert isinstance(result.exception, Started), result.output
        port = commands[-1][commands[-1].index("--port") + 1]
        assert (port == "18999") == fixed and commands[-1][-1] == f"http://127.0.0.1:{port}/v1"
        # its notice does not send the user to options serve-local does not have
        assert "offline smoke tests" in result.output and "--base-url" not in result.output
