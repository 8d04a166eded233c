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
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    return int(done.value.code or 0), capsys.readouterr().err


def _config(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "c.yaml"
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(("extra", "said"), [
    (["--method", "rouge", "--subset", "2", "--seed", "-1"], "Invalid value for '--seed'"),
    (["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-timeout", "inf"],
     "Invalid value for '--judge-timeout'"),
    (["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--config", b"judge_timeout: .inf\n"],
     "Invalid value for '--judge-timeout'"),
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
    assert "Traceback" not in err and said.format(config=tmp_path / "c.yaml") in err, err
    # one line of ours, or click's usage error for a bad flag value (usage, "Try --help" and its one Error: line)
    assert len([line for line in err.splitlines() if line.startswith(("error:", "Error:"))]) == 1, err


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
