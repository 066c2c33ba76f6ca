"""Include globs: what they match, and that no pattern makes the matching blow up (issue 25)."""

from __future__ import annotations

import asyncio
import itertools
import time

import httpx
import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.connectors.errors import ConnectorError
from docproc_common.http import create_app
from docproc_sync.connectors import globs
from docproc_sync.connectors.git import select
from docproc_sync.connectors.globs import Glob, segment_matches


class TestMatches:
    @pytest.mark.parametrize(
        ("pattern", "taken", "left"),
        [
            ("**/*.md", ["README.md", "docs/a/b.md", ".md"], ["a.mdx", "docs/a.md/x"]),
            ("docs/**", ["docs/x", "docs/x/y.txt"], ["docs", "src/docs/x"]),
            ("*.txt", ["a.txt"], ["d/a.txt", "a.txt.gz"]),
            ("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["b", "a/b/c", "x/a/b"]),
            ("**", ["x", "a/b/c"], []),
            ("d?c/*-v?.md", ["doc/a-v1.md", "dxc/-v2.md"], ["dc/a-v1.md", "doc/a-v10.md"]),
            ("*a*b*", ["ab", "xaybz", "bab"], ["ba", "b"]),
            ("**/**/x.md", ["x.md", "a/b/x.md"], ["x.mdx"]),
        ],
    )
    def test_what_a_pattern_takes(self, pattern: str, taken: list[str], left: list[str]) -> None:
        glob = Glob.compile(pattern)
        assert [p for p in taken if not glob.matches(p)] == []
        assert [p for p in left if glob.matches(p)] == []


class TestBounded:
    """The work is counted, not timed: a bound on the steps holds on any machine."""

    def test_folders_of_the_old_catastrophe_cost_pattern_times_path_segments(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``(?:.*/)?a/`` ten times took ~C(80, 10) steps against 80 folders ``a``."""
        calls = itertools.count()
        real = globs.segment_matches

        def counted(pattern: str, name: str) -> bool:
            next(calls)
            return real(pattern, name)

        monkeypatch.setattr(globs, "segment_matches", counted)
        glob = Glob.compile("**/a/" * 10 + "**/b")
        assert not glob.matches("a/" * 80 + "a")
        assert glob.matches("a/" * 80 + "b")
        assert next(calls) <= 2 * len(glob.segments) * 81

    def test_one_name_costs_its_length_times_the_pieces(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fits = itertools.count()
        real = globs._fits

        def counted(piece: str, name: str, at: int) -> bool:
            next(fits)
            return real(piece, name, at)

        monkeypatch.setattr(globs, "_fits", counted)
        pattern, name = "*?a" * 60 + "*b", "a" * 5000
        assert len(pattern) <= 200
        assert not segment_matches(pattern, name)
        assert segment_matches(pattern, name + "b")
        assert next(fits) <= 2 * (len(name) + 62)


async def test_a_listing_past_its_deadline_stops_and_healthz_keeps_answering() -> None:
    """The matching runs on the blocking pool (``BaseSyncConnector.blocking``) and, being
    Python rather than ``_sre``, lets the event loop run between its steps: ``/healthz``
    (the probes' route, ``docproc_common.http``) answers throughout, as do the bus's
    heartbeats; an endless tree is cut by the deadline. With the regexes of main, one
    such path held the GIL for hours and ``/healthz`` never answered."""
    endless = itertools.repeat(("100644", "f" * 40, 10, "a/" * 80 + "a"))
    patterns = [Glob.compile("**/a/" * 10 + "**/b")] * 20
    pool = BlockingPool(2)
    transport = httpx.ASGITransport(app=create_app(title="docproc-sync"))
    waits: list[float] = []
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://sync") as probe:
            work = asyncio.create_task(pool.run(select, endless, patterns, 1 << 20, 1.0))
            while not work.done():
                before = time.monotonic()
                await asyncio.sleep(0.01)  # a prober's pause, which hands the loop over
                assert (await probe.get("/healthz")).json() == {"status": "ok"}
                waits.append(time.monotonic() - before)
            with pytest.raises(ConnectorError, match="took more than 1 s"):
                await work
    finally:
        pool.shutdown()
    assert len(waits) > 10 and max(waits) < 0.5
