"""An evaluation run of a base that names a reranker scores one mode more, ``rerank``: a
search naming no mode answered with the base's reranker (here a tiny cross-encoder mounted
as the deployment's, built to rank by the word "the" alone, so its ranking is not the
search's); a base without one is scored as before, and the run keeps the setting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from docproc_common.runtime import Runtime
from docproc_common.settings import BusMode
from docproc_testing.runtime import fresh_runtime
from docproc_testing.tiny_rerankers import tiny_cross_encoder

from .conftest import Client
from .test_evaluations import MODES, indexed_base, judged
from .test_tenancy import EDIT, VIEW

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    """The package's runtime, with a mounted cross-encoder that knows one word: "the"."""
    model = tiny_cross_encoder(tmp_path_factory.mktemp("ce"), ["the"])
    bus = {"mode": BusMode.EMBEDDED, "relay_interval_s": 0.05}
    embedder = {"rerank_model_dir": str(model)}
    async with fresh_runtime(tmp_path_factory.mktemp("media"), bus=bus, embedder=embedder) as rt:
        yield rt


async def run_of(c: Any, kb: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    r = await c.post(f"/kb/{kb['id']}/evaluations", json={"name": "t", "queries": judged(ids)})
    assert r.status_code == 201, r.text
    run = await c.post(f"/kb/{kb['id']}/evaluations/{r.json()['id']}/run")
    assert run.status_code == 201, run.text
    return dict(run.json())


async def test_a_base_with_a_reranker_is_scored_with_it_too(client: Client) -> None:
    alice = client("alice", "acme", (VIEW, EDIT))
    kb, ids = await indexed_base(alice)

    without = await run_of(alice, kb, ids)
    assert set(without["scores"]) | set(without["skipped"]) == MODES  # no rerank mode
    assert without["settings"]["rerank"] is None

    r = await alice.patch(f"/kb/{kb['id']}", json={"rerank": {"provider": "local"}})
    assert r.status_code == 200, r.text
    run = await run_of(alice, kb, ids)
    assert set(run["scores"]) == {*MODES, "rerank"} and run["skipped"] == {}
    assert run["settings"]["rerank"]["provider"] == "local"
    # the other modes are searched without the stage: as they were
    for mode in MODES:
        assert run["scores"][mode] == without["scores"][mode]
    # the otters document has no "the": the cross-encoder puts it last for its query
    assert run["scores"]["hybrid"]["ndcg_at_10"] == 1.0
    assert run["scores"]["rerank"]["ndcg_at_10"] < 1.0
    assert run["scores"]["rerank"]["recall_at_100"] == 1.0
