"""Sync change detection: a 10,000-object prefix of an object store with 1% changed between runs.

The store is moto's S3 (default), Azurite (``--store azure_blob``: the ETag path) or
fake-gcs-server (``--store gcs``: the md5Hash path, a service account exchanged at a
local token endpoint). Runs the sync service's own run
(``docproc_sync.service.run_source``) in-process against the test infrastructure
(Postgres and the store, ``scripts/infra.py``) on a fresh database; the parser and
the embedder are played by marking every dispatched row ``done`` between runs, so the figures are the sync run alone:
listing, change decisions, fetches, staging and the tracking rows.

1. first run: every object is new (listed, fetched, staged, dispatched);
2. 1% of the objects are rewritten; second run, the change signal's path: only those
   are fetched;
3. another 1% rewritten; the same run with the connector's signal hidden, i.e. the
   ``content_hash`` fallback a connector without a change signal gets: every
   object is fetched to find the 1% that changed.

    uv run python bench/sync.py                       # 10,000 objects, 1% changed
    uv run python bench/sync.py --objects 2000 --changed 0.05
    uv run python bench/sync.py --store azure_blob --objects 2000
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import platform
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from docproc_common.runtime import Runtime
from docproc_common.settings import DatabaseSettings, Settings, StorageSettings, SyncSettings
from docproc_sync.connectors import CONNECTORS
from docproc_sync.connectors.object_store import ObjectStoreConnector, StoredObject
from docproc_sync.testing import SyncBed
from docproc_testing.db import create_test_database
from docproc_testing.infra import load_infra_env
from docproc_testing.stores import AzuriteStore, GcsStore, S3Store, Store, TokenServer

WORDS = "penguin capybara river forest ledger invoice policy handbook onboarding".split()


def body(n: int, version: int, size: int) -> bytes:
    rng = random.Random(n * 1000 + version)
    words: list[str] = []
    length = 0
    while length < size:
        words.append(rng.choice(WORDS))
        length += len(words[-1]) + 1
    return f"# Document {n} v{version}\n\n{' '.join(words)}\n".encode()


def without_signal(cls: type[Any]) -> type[ObjectStoreConnector[Any]]:
    """The same connector with its change signal withheld: the content_hash fallback."""

    class NoSignal(cls):  # type: ignore[misc]
        def _list_page(self, token: str | None) -> tuple[list[StoredObject], str | None]:
            objects, more = super()._list_page(token)
            return [StoredObject(o.key, o.size, None) for o in objects], more

    return NoSignal


def open_store(name: str, tokens: TokenServer) -> Store:
    if name == "s3":
        return S3Store(load_infra_env(("postgres", "s3")))
    emulators = load_infra_env(("postgres", name if name == "gcs" else "azurite"))
    return AzuriteStore(emulators) if name == "azure_blob" else GcsStore(emulators, tokens)


async def main(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING)
    infra = load_infra_env(("postgres",))
    tokens = TokenServer()
    store = open_store(args.store, tokens)
    prefix = "corpus/"
    keys = [f"{prefix}{n // 100:03}/doc-{n:05}.md" for n in range(args.objects)]

    def put(pairs: list[tuple[int, int]]) -> int:
        def one(pair: tuple[int, int]) -> int:
            data = body(pair[0], pair[1], args.size)
            store.put({keys[pair[0]]: data})
            return len(data)

        with ThreadPoolExecutor(8) as pool:
            return sum(pool.map(one, pairs))

    started = time.perf_counter()
    total_bytes = put([(n, 0) for n in range(args.objects)])
    print(
        f"seeded {args.objects} objects ({total_bytes / 1e6:.1f} MB) in "
        f"{time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )

    database_url = await create_test_database(infra["DATABASE__URL"])
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        settings = Settings(
            env="dev",
            database=DatabaseSettings(url=database_url, pool_size=10, max_overflow=5),
            storage=StorageSettings(media_dir=Path(tmp) / "media"),
        )
        runtime = Runtime.create(settings)
        sync = SyncSettings(
            allow_private_networks=True,
            allow_plain_http=True,
            concurrency=args.concurrency,
            state_dir=Path(tmp) / "sync",
        )
        bed = SyncBed(runtime, sync)
        try:
            kb = await bed.kb()
            secret = await bed.secret(store.secret_kind, store.secret())
            src = await bed.source(kb, store.connector, store.config(prefix), secret_id=secret)
            rows: list[tuple[str, Any, float]] = []

            async def measured(label: str) -> None:
                t0 = time.perf_counter()
                log = await bed.run(src.id)
                wall = time.perf_counter() - t0
                rows.append((label, log, wall))
                print(f"{label}: {wall:.1f} s {log.status}", file=sys.stderr)
                await bed.finish_pipeline(kb.id)

            await measured("first run (all new)")
            rng = random.Random(7)
            changed = max(1, int(args.objects * args.changed))
            put([(n, 1) for n in rng.sample(range(args.objects), changed)])
            connector = CONNECTORS[store.connector]
            signal = connector.CHANGE_SIGNAL
            await measured(f"second run, {args.changed:.0%} changed, {signal}")
            put([(n, 2) for n in rng.sample(range(args.objects), changed)])
            CONNECTORS[store.connector] = without_signal(connector)
            try:
                await measured(f"third run, {args.changed:.0%} changed, no {signal} (hash only)")
            finally:
                CONNECTORS[store.connector] = connector
        finally:
            await runtime.close()
            tokens.close()

    print(
        f"\n{store.connector}: {args.objects} objects of ~{args.size} B, "
        f"concurrency {args.concurrency}; "
        f"Python {platform.python_version()}, {platform.machine()}\n"
    )
    print("| run | wall s | listed | fetched MB | ingested | updated | skipped | objects/s |")
    print("|---|---|---|---|---|---|---|---|")
    for label, log, wall in rows:
        print(
            f"| {label} | {wall:.1f} | {log.total_files} | {log.bytes_fetched / 1e6:.2f} | "
            f"{log.ingested} | {log.updated} | {log.skipped} | {log.total_files / wall:,.0f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--size", type=int, default=2048, help="bytes per object (about)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--store", choices=["s3", "azure_blob", "gcs"], default="s3")
    asyncio.run(main(parser.parse_args()))
