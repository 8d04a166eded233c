"""Issue 23, defect 9: bad values are one line and exit 2, never a traceback; and the messages say what is meant.

Tracebacks were: --seed -1 (numpy refused it), --judge-timeout inf or `.inf` in a config file (the event loop's
timer overflowed), a config file with non-UTF-8 bytes. Confusing: an HTTP 200 error body reported as
"('choices')", a warning with a Python source line under it, `yes:` in a config file reported as 'True', and
--replay's help saying no endpoint is needed (the cache is keyed by the model's name).
"""

from __future__ import annotations

import re
import subprocess
import sys
import types
import warnings
from collections.abc import Mapping
from pathlib import Path

import pytest

from howtobench.cli import main as cli_main
from howtobench.config import EndpointConfig
from howtobench.errors import TransientError
from howtobench.llm.client import open_client
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.transport import HttpResponse
from howtobench.llm.types import ChatRequest

JUDGE = ["judge", "--task", "guide", "--limit", "1", "--models", "deepseek-r1", "--no-progress"]


def howtobench(args: list[str], tmp_path: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The console entry point as a user runs it, in this process: (exit status, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOWTOBENCH_DATA", str(bench_root))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", ["howtobench", *args, "--workspace", str(tmp_path / "ws")])
    as_console_script(monkeypatch)
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    return int(done.value.code or 0), capsys.readouterr().err


def as_console_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """Click names the program from `__main__` (here pytest's): as the `howtobench` script runs, it is argv[0]."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


def _config(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "c.yaml"
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(("extra", "said"), [
    (["--method", "rouge", "--subset", "2", "--seed", "-1"],
     "error: --seed: Input should be greater than or equal to 0 (see howtobench judge --help)"),
    (["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-timeout", "inf"],
     "error: --judge-timeout: Input should be less than or equal to 86400 (see howtobench judge --help)"),
    (["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--config", b"judge_timeout: .inf\n"],
     "error: --judge-timeout: Input should be less than or equal to 86400 (see howtobench judge --help)"),
    (["--method", "rouge", "--config", b"seed: 1\n# \xff\xfe\n"],
     "error: cannot read config file {config}: not UTF-8 text (byte 0xff at offset 10); save it as UTF-8"),
    (["--method", "rouge", "--config", b"yes: true\n"],
     "error: {config}: a key written yes, on or true reads as a YAML boolean, not a name: quote it (\"yes\": true "
     "for --yes)"),
])
def test_a_bad_value_is_a_short_message_and_exit_2(extra: list[str | bytes], said: str, tmp_path: Path,
                                                    bench_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    args = [_config(tmp_path, a) if isinstance(a, bytes) else a for a in extra]
    code, err = howtobench([*JUDGE, *args, "-o", str(tmp_path / "j.jsonl")], tmp_path, bench_root, monkeypatch,
                           capsys)
    assert code == 2, err
    assert err.splitlines() == [said.format(config=tmp_path / "c.yaml")], err  # one line: no Usage, no Try


@pytest.mark.parametrize(("args", "said"), [
    (["judge", "--seeed", "3"],
     "error: No such option: --seeed (Possible options: --seed, --tree) (see howtobench judge --help)"),
    (["jduge"], "error: No such command 'jduge'. Did you mean 'judge'? (see howtobench --help)"),  # issue 40
    (["merge"], "error: Missing argument 'parts'. (see howtobench merge --help)"),
    (["meta", "correlate", "--boostrap", "5"],
     "error: No such option: --boostrap (Possible options: --bootstrap) (see howtobench meta correlate --help)"),
    (["leaderboard", "x.jsonl", "--format", "xml"],
     "error: --format: unknown format 'xml'; known: table, markdown, csv, json (see howtobench leaderboard --help)"),
])
def test_every_usage_error_is_one_line_and_exit_2(args: list[str], said: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Click's usage errors (unknown option with its suggestion, unknown command, missing argument, a value its
    callback refuses) are click's message in one line of ours, not its Usage / Try / Error block."""
    code, shown = console(args, monkeypatch, capsys)
    assert (code, shown.err.splitlines()) == (2, [said])


def test_help_version_and_no_arguments_are_unchanged(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, bare = console([], monkeypatch, capsys)  # no arguments: the help, on stderr, status 2 (click's)
    assert code == 2 and bare.err.startswith("Usage: howtobench [OPTIONS] COMMAND [ARGS]...")
    assert "judge" in bare.err and "error:" not in bare.err
    for args, first in ((["--version"], "howtobench "), (["judge", "--help"], "Usage: howtobench judge [OPTIONS]"),
                        (["meta"], "")):
        code, shown = console(args, monkeypatch, capsys)
        if args == ["meta"]:  # a group without its command: its help, as before
            assert code == 2 and shown.err.startswith("Usage: howtobench meta [OPTIONS] COMMAND [ARGS]...")
        else:
            assert code == 0 and shown.out.startswith(first) and shown.err == ""


def console(args: list[str], monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, pytest.CaptureResult[str]]:
    """`howtobench ARGS` through the console entry point, in this process: (exit status, what it printed)."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", ["howtobench", *args])
    as_console_script(monkeypatch)
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    return int(done.value.code or 0), capsys.readouterr()


def test_an_unresolvable_host_is_one_line(tmp_path: Path, bench_root: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "howtobench", "serve", "--host", "no-such-host.invalid",
                           "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--no-preflight",
                           "--workspace", str(tmp_path / "ws")], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: cannot listen on no-such-host.invalid:")


class _Answers200:
    """A transport whose every answer is an HTTP 200 carrying `body`."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        return HttpResponse(200, {}, self.body)

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        raise AssertionError("not used")

    async def close(self) -> None:
        pass


@pytest.mark.parametrize(("body", "said"), [
    (b'{"error": {"message": "quota exhausted for this key", "code": 402}}',
     "answered HTTP 200 with an error instead of a completion: quota exhausted for this key"),
    (b'{"object": "list", "data": []}', "answered HTTP 200 with JSON that is not a chat completion (no 'choices' in"),
])
async def test_an_http_200_that_is_no_completion_says_what_it_is(body: bytes, said: str, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=("http://127.0.0.1:9/v1",), max_retries=1)
    async with open_client(ep, workspace=tmp_path, transport=_Answers200(body),
                           retry=RetryPolicy(base_s=0.001, max_s=0.002)) as client:
        with pytest.raises(TransientError, match=re.escape(said)):
            await client.chat(ChatRequest(messages=({"role": "user", "content": "x"},)))


def test_a_warning_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def warns() -> None:
        warnings.warn("unknown sub_task label 'x': counted as genre 'others'", UserWarning, stacklevel=1)

    monkeypatch.setattr(cli_main, "build_app", lambda commands: warns)
    monkeypatch.setattr(sys, "argv", ["howtobench", "list"])
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        cli_main.main()
    assert capsys.readouterr().err == "warning: unknown sub_task label 'x': counted as genre 'others'\n"


def test_replay_help_says_the_endpoint_flags_are_needed() -> None:
    from howtobench.cli.options import ReplayOpt

    text = ReplayOpt.__metadata__[0].help
    assert "Needs no endpoint" not in text and "same endpoint flags as the run that filled the cache" in text
