"""The command shell: one command line imports one command module, and errors print as one line."""

from __future__ import annotations

import subprocess
import sys

from howtobench.cli.main import COMMAND_MODULES

LOADED = """
import sys
from howtobench.cli.main import main
sys.argv = ["howtobench", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(sorted(m.removeprefix("howtobench.cli.") for m in sys.modules if m.removeprefix("howtobench.cli.") in {names}))
"""


def loaded_commands(*argv: str) -> list[str]:
    code = LOADED.format(names=set(COMMAND_MODULES))
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own print of a list of names


def test_the_lazy_group_imports_the_named_command_only() -> None:
    """The command group is lazy (it read argv before): a command line imports its own command's module."""
    assert loaded_commands("data", "stats", "--help") == ["data"]
    assert loaded_commands("--help") == sorted(COMMAND_MODULES)
    assert loaded_commands("no-such-command") == []


def test_data_command_does_not_import_the_analysis_stack() -> None:
    code = (
        "import sys; from howtobench.cli.main import build_app; build_app(('data',)); "
        "print(sorted(m for m in ('scipy', 'matplotlib', 'jieba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_and_error_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    version = subprocess.run(
        [sys.executable, "-m", "howtobench", "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("howtobench ")
    missing = tmp_path / "nowhere"
    failed = subprocess.run(
        [sys.executable, "-m", "howtobench", "data", "stats", "--data", str(missing)], capture_output=True, text=True
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: ")
    assert "[bold red]" not in failed.stderr


def test_error_line_never_shows_a_credential(bench_root, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A base URL that is not a URL stops at once, quoted without its credentials."""
    failed = subprocess.run(
        [sys.executable, "-m", "howtobench", "judge", "--method", "single", "--limit", "1", "--data", str(bench_root),
         "-o", str(tmp_path / "out.jsonl"), "--workspace", str(tmp_path / "ws"), "--no-progress",
         "--judge-base-url", "notaurl?api-key=flag-S3CRET", "--judge-model", "m"],
        capture_output=True, text=True, timeout=60,
    )
    assert failed.returncode == 2, failed.stderr
    assert "error: base URL 'notaurl?api-key=***' is not an http(s) URL" in failed.stderr
    assert "S3CRET" not in failed.stderr + failed.stdout


def test_ctrl_c_says_what_is_kept(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C ended a judge run with a silent exit 130; now one line says the finished work is kept."""
    import pytest
    import typer

    from howtobench.cli import main as cli_main

    def interrupted(_: object) -> typer.Typer:
        app = typer.Typer()

        @app.command()
        def work() -> None:
            raise KeyboardInterrupt

        return app

    monkeypatch.setattr(cli_main, "build_app", interrupted)
    monkeypatch.setattr(sys, "argv", ["howtobench"])
    with pytest.raises(SystemExit) as stopped:
        cli_main.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err.startswith("interrupted: what finished is saved")
