"""An upload-service app on a fresh database, over the local or the S3 (moto) file store."""

from __future__ import annotations

import functools
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from docproc_common.auth import EDIT, VIEW
from docproc_common.runtime import Runtime, build_app
from docproc_testing.db import create_test_database
from docproc_testing.infra import load_infra_env
from docproc_testing.runtime import api_client, fresh_runtime
from docproc_upload.app import build

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # chat_inputs, chat_support

from chat_support import ChatApi, LocalApi, chat_api  # noqa: E402


@pytest.fixture(scope="session")
def infra() -> dict[str, str]:
    env = load_infra_env(("postgres", "s3"))
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        if key in env:
            os.environ.setdefault(key, env[key])
    return env


@pytest_asyncio.fixture(scope="session")
async def database_url(infra: dict[str, str]) -> str:
    return await create_test_database(infra["DATABASE__URL"])


@pytest_asyncio.fixture(scope="module", params=["local", "s3"])
async def api(
    request: pytest.FixtureRequest,
    database_url: str,
    infra: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[ChatApi]:
    async with chat_api(database_url, infra, request.param, tmp_path_factory.mktemp("chat")) as a:
        yield a


@pytest.fixture
def local_api(database_url: str, infra: dict[str, str], tmp_path: Path) -> LocalApi:
    return functools.partial(chat_api, database_url, infra, "local", tmp_path)


@pytest.fixture
def user() -> str:
    """A person of one's own per test, so counts never see another test's files."""
    return f"u-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    """The module's runtime on a fresh database (a module that needs other settings declares
    its own)."""
    async with fresh_runtime(tmp_path_factory.mktemp("media")) as rt:
        yield rt


@pytest_asyncio.fixture(scope="module")
async def alice(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """alice of acme, with view and edit, on the upload app over the module's ``runtime``."""
    app = build_app(runtime, [build(runtime)], [], "docproc-test")
    async with api_client(app, "alice", "acme", (VIEW, EDIT)) as client:
        yield client
