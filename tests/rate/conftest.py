"""Fixtures of the rating-app tests: a study on 10 release writings and API clients on one test server."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from rate_helpers import ClientFactory, write_writings

from howtobench.rate.app import build_app
from howtobench.rate.store import DB_NAME
from howtobench.rate.study import Study, StudySettings, create_study, open_study


@pytest.fixture
def writings_file(tmp_path: Path, bench_root: Path) -> Path:
    return write_writings(bench_root, tmp_path / "writings.jsonl")


@pytest.fixture
def study_settings() -> StudySettings:
    """Override in a test module to run the same fixtures on another study mode."""
    return StudySettings()


_TEMPLATES: dict[StudySettings, Path] = {}


@pytest.fixture
def study(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, bench_root: Path, study_settings: StudySettings
) -> Iterator[Study]:
    """A fresh study on the 10 writings; built once per settings, then copied (reading the benchmark takes time)."""
    if study_settings not in _TEMPLATES:
        folder = tmp_path_factory.mktemp("study-template")
        writings = write_writings(bench_root, folder / "writings.jsonl")
        create_study(folder / "study", [writings], bench_root, study_settings).close()
        _TEMPLATES[study_settings] = folder / "study" / DB_NAME
    (tmp_path / "study").mkdir()
    shutil.copy(_TEMPLATES[study_settings], tmp_path / "study" / DB_NAME)
    opened = open_study(tmp_path / "study")
    yield opened
    opened.close()


@pytest.fixture
async def clients(study: Study) -> AsyncIterator[ClientFactory]:
    """A factory of API clients, each with its own cookie jar (one per rater), on one test server."""
    server = TestServer(build_app(study))
    made: list[TestClient[Any, Any]] = []

    async def make() -> TestClient[Any, Any]:
        client: TestClient[Any, Any] = TestClient(server)
        await client.start_server()
        made.append(client)
        return client

    yield make
    for client in made:
        await client.close()
    await server.close()
