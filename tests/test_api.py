"""`howtobench.score` / `ascore`: one writing, with an open client or an endpoint, with or without reference."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path

import pytest

import howtobench
from fake_server import FakeServer, Reply, default_handler
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment
from howtobench.llm.client import open_client


def handler(request: dict) -> Reply:
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "weights":
        groups = schema["schema"]["properties"]
        return Reply.json({**{g: {leaf: 1 / len(s["required"]) for leaf in s["required"]}
                          for g, s in groups.items() if s.get("type") == "object"}, "explanation": "uniform"})
    if schema.get("name") == "leaf_score":
        return Reply.json({"analysis": "fine", "score": schema["schema"]["properties"]["score"]["enum"][-1]})
    return default_handler(request)


async def test_ascore_with_an_open_client(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    async with open_client(endpoint, workspace=tmp_path) as client:
        text = "第一段。\n\n第二段。"
        judgment = await howtobench.ascore("写一篇短文", text, reference="范文：山高水长。", judge=client)
    assert judgment.status == "ok" and judgment.score == pytest.approx(10.0)  # every leaf at its top value
    assert judgment.meta["reference"] is True and judgment.item_id.startswith("adhoc-")
    assert any("山高水长" in str(r["messages"]) for r in fake_server.requests)


def test_score_sync_reference_free_with_an_endpoint(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    judgment = howtobench.score("写一篇短文", "正文。", judge=endpoint, workspace=tmp_path, task="completion")
    assert judgment.meta["reference"] is False and set(judgment.nodes) == {"content", "impression"}
    assert not any("参考范文" in str(r["messages"]) for r in fake_server.requests)


async def test_score_works_inside_a_running_loop_as_in_jupyter(fake_server: FakeServer, tmp_path: Path) -> None:
    """A Jupyter cell runs inside the kernel's event loop: score() raised there (asyncio.run refuses a running loop)."""
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    asyncio.get_running_loop()  # the situation of a notebook cell
    judgment = howtobench.score("写一篇短文", "正文。", judge=endpoint, workspace=tmp_path, task="completion")
    assert judgment.status == "ok" and judgment.score is not None and set(judgment.nodes) == {"content", "impression"}
    with pytest.raises(ConfigError, match="unknown task"):  # its errors are raised in the caller's thread
        howtobench.score("x", "y", judge=endpoint, workspace=tmp_path, task="nope")
    await asyncio.sleep(0)


def readme_python_example() -> str:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    assert blocks, "the README has no Python example"
    return blocks[0]


def test_readme_python_example_runs_against_the_fake_server(fake_server: FakeServer, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server.handler = handler
    code = readme_python_example().replace("https://api.openai.com/v1", fake_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own example, as written
    result = scope["result"]
    assert isinstance(result, Judgment) and result.status == "ok" and result.score == pytest.approx(10.0)
    assert (tmp_path / "ws").is_dir()  # a str workspace
    assert fake_server.log[0].headers.get("authorization") == "Bearer sk-test"


def test_top_level_api_and_base_url_shorthand(fake_server: FakeServer, tmp_path: Path) -> None:
    assert {"score", "ascore", "EndpointConfig"} <= set(dir(howtobench))
    assert howtobench.EndpointConfig is EndpointConfig
    one = EndpointConfig(model="m", base_url="http://h/v1/")
    assert one.base_urls == ("http://h/v1",) and EndpointConfig(model="m", base_urls="http://h/v1") == one
    assert EndpointConfig(model="m", base_url=["http://a/v1", "http://b/v1"]).base_urls == ("http://a/v1", "http://b/v1")
    fake_server.handler = handler
    judgment = howtobench.score("写一篇短文", "正文。", base_url=fake_server.base_url, model="fake-judge",
                                workspace=str(tmp_path / "w"), tree=str(Path(howtobench.__file__).parent
                                                                        / "judges" / "trees" / "default.yaml"))
    assert judgment.score == pytest.approx(10.0) and judgment.judge_model == "fake-judge"
    with pytest.raises(ConfigError, match="not both"):
        howtobench.score("x", "y", judge=one, base_url="http://h/v1", model="m")


async def test_ascore_raises_a_run_level_error_instead_of_a_failed_judgment() -> None:
    from fake_clients import FakeClient
    from howtobench.errors import PermanentError

    client = FakeClient(lambda request: PermanentError("http://judge/v1 answered HTTP 401"))
    with pytest.raises(PermanentError, match="401"):
        await howtobench.ascore("写一篇短文", "正文。", judge=client)


def test_a_wrong_task_is_a_clear_error_and_help_shows_every_parameter() -> None:
    """task="opne" raised pydantic's ValidationError for `Item`; help(howtobench.score) showed only **kwargs."""
    with pytest.raises(ConfigError, match="unknown task 'opne' \\(did you mean 'open'\\?\\)"):
        howtobench.score("写", "文", task="opne")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown language 'fr'"):
        howtobench.score("写", "文", language="fr")  # type: ignore[arg-type]
    params = inspect.signature(howtobench.score).parameters
    assert {"reference", "task", "judge", "base_url", "model", "workspace"} <= set(params)
    assert "reference-free prompts" in (howtobench.score.__doc__ or "")


@pytest.mark.parametrize(("language", "mark"), [(None, "[Writing instructions]"), ("zh", "【写作要求】")])
def test_score_takes_the_judge_prompt_language(fake_server: FakeServer, tmp_path: Path, language: str | None,
                                               mark: str) -> None:
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    extra = {} if language is None else {"prompt_language": language}
    judgment = howtobench.score("写一篇短文", "正文。", reference="范文。", judge=endpoint, workspace=tmp_path, **extra)
    assert judgment.prompt_language == (language or "en")
    assert all(mark in r["messages"][-1]["content"] for r in fake_server.requests)


def test_provider_gives_a_named_servers_defaults_under_what_is_given(fake_server: FakeServer, tmp_path: Path) -> None:
    """`provider=` fills the endpoint from llm.wire.PROVIDERS (deepseek: json_object with the schema in the prompt),
    an explicit `base_url=` wins over the profile's, and a profile without `model=` is a clear error."""
    fake_server.handler = handler
    judgment = howtobench.score("写一篇短文", "正文。", provider="llama-cpp", base_url=fake_server.base_url,
                                model="fake-judge", workspace=str(tmp_path / "w"))
    assert judgment.score is not None and judgment.judge_model == "fake-judge"
    assert {r["model"] for r in fake_server.requests} == {"fake-judge"}
    endpoint = howtobench.api.judge_endpoint(None, None, "deepseek-chat", None, "deepseek")
    assert isinstance(endpoint, EndpointConfig)
    assert endpoint.base_urls == ("https://api.deepseek.com/v1",) and endpoint.api_key_env == "DEEPSEEK_API_KEY"
    assert endpoint.response_format == "json_object"
    with pytest.raises(ConfigError, match="provider='deepseek' needs model="):
        howtobench.score("x", "y", provider="deepseek")
    with pytest.raises(ConfigError, match="unknown provider"):
        howtobench.score("x", "y", provider="deepsek", model="m")
