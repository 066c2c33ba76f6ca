"""``docproc-sync rag-sync-gdrive``: a Drive folder as operator content, the sync service's
one-shot operator command (``docproc rag-sync-gdrive`` runs it).

Read with the deployment's own service account (``GOOGLE_DRIVE_CREDENTIALS_FILE``, or
``--credentials-file``), its only reader: no sync source ever falls back to that file. The
listing and the downloads are the ``google_drive`` connector's (its refusals, its landing
rule); each file is then ingested as operator content through the one pipeline
(``docproc_common.operator_content``), addressed ``gdrive://<id>``, so a run again skips an
unchanged file (its bytes and settings), re-chunks one whose settings changed and replaces a
changed one. Nothing is deleted. The deployment's parser and embedder index the files; the
command waits for them and prints the totals (exit 2 when a file failed, 1 when refused).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.config import check_config
from docproc_common.connectors.errors import ConnectorError
from docproc_common.connectors.remote_names import last_component
from docproc_common.connectors.specs.gdrive import GoogleDriveConfig
from docproc_common.errors import AppError
from docproc_common.observability import configure_logging
from docproc_common.operator_content import OperatorFile, OperatorIngest, Totals
from docproc_common.runtime import Runtime, settings_problems
from docproc_common.settings import SyncSettings, get_settings
from pydantic import ValidationError

from docproc_sync.connectors.gdrive import GoogleDriveConnector

COMMAND = "rag-sync-gdrive"
KEY_FILE = "GOOGLE_DRIVE_CREDENTIALS_FILE"


async def import_drive_folder(
    runtime: Runtime,
    settings: SyncSettings,
    credentials: dict[str, Any],
    config: dict[str, Any],
    collection: str,
    progress: Callable[[str, str], None],
) -> Totals:
    """List and fetch the folder, ingest each readable file as operator content, and wait for
    them (module docstring). The configuration is checked before any call, the name before
    any download."""
    options = ConnectorOptions.of(settings, pool=runtime.pool)
    checked = check_config(GoogleDriveConnector.NAME, config, options, root="")
    assert isinstance(checked, GoogleDriveConfig)
    ingest = OperatorIngest(
        runtime, collection, lambda f, outcome: progress(f"{f.source_path} ({f.name})", outcome)
    )
    await ingest.check()
    connector = GoogleDriveConnector(checked, credentials, options)
    totals = Totals()
    try:
        listing = await connector.list_files()
        if not listing.complete:
            progress(checked.folder_id, f"listing incomplete: {listing.note}")
        with tempfile.TemporaryDirectory(prefix="docproc-gdrive-") as tmp:
            for n, remote in enumerate(sorted(listing.files, key=lambda f: f.address)):
                try:
                    name = last_component(remote.name)
                except ConnectorError as exc:
                    progress(remote.address, f"skipped: {exc.message}")
                    continue
                if not ingest.supports(name):
                    progress(remote.address, "skipped: unsupported type")  # never fetched
                    continue
                landing = Path(tmp) / f"f{n}"
                landing.mkdir()
                try:
                    path = await connector.fetch(remote, landing)
                except ConnectorError as exc:
                    progress(remote.address, f"failed: {exc.message}")
                    totals += Totals(failed=1)
                    continue
                await ingest.queue(OperatorFile(path, name, remote.address, connector.NAME))
                await runtime.pool.run(shutil.rmtree, landing, True)
    finally:
        await connector.aclose()
    return totals + await ingest.settle()


def read_key_file(path: str | None) -> dict[str, Any]:
    """The service-account key; ``ValueError`` saying what is wrong with it."""
    if not path:
        raise ValueError(
            f"{COMMAND} reads the deployment's service account: pass --credentials-file or "
            f"set {KEY_FILE}"
        )
    try:
        key = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is no readable JSON key file") from exc
    if not isinstance(key, dict):
        raise ValueError(f"{path} is no service-account key file")
    return key


def main(argv: list[str]) -> int:
    """``docproc-sync rag-sync-gdrive FOLDER_ID -c NAME``: its exit status."""
    args = argparse.ArgumentParser(
        prog=f"docproc-sync {COMMAND}",
        description="Ingest a Google Drive folder as operator content, read with the "
        "deployment's service account.",
    )
    args.add_argument("folder_id", help="the Drive folder's id")
    args.add_argument("-c", "--collection", default="default", help="collection name")
    args.add_argument("--credentials-file", default=os.environ.get(KEY_FILE))
    args.add_argument("--include-shared-drives", action="store_true")
    args.add_argument("--no-recursive", dest="recursive", action="store_false")
    args.add_argument("--export-format", default="office", help="office or pdf")
    given = args.parse_args(argv)
    try:
        credentials = read_key_file(given.credentials_file)
    except ValueError as exc:
        print(f"refused: {exc}")  # noqa: T201 - the command's output
        return 2
    config = {
        "folder_id": given.folder_id,
        "include_shared_drives": given.include_shared_drives,
        "recursive": given.recursive,
        "export_format": given.export_format,
    }
    configure_logging()
    return asyncio.run(_run(credentials, config, given.collection))


async def _run(credentials: dict[str, Any], config: dict[str, Any], collection: str) -> int:
    def show(address: str, outcome: str) -> None:
        print(f"{address}: {outcome}", flush=True)  # noqa: T201 - the command's output

    try:
        settings = get_settings()
    except ValidationError as exc:
        print(f"refused: {settings_problems(exc)}")  # noqa: T201
        return 1
    runtime = Runtime.create(settings)
    try:
        totals = await import_drive_folder(
            runtime, runtime.settings.sync, credentials, config, collection, show
        )
    except (AppError, ConnectorError) as exc:
        print(f"refused: {exc.message}")  # noqa: T201
        return 1
    finally:
        await runtime.close()
    show(
        collection,
        f"{totals.ingested} ingested ({totals.rechunked} re-chunked), {totals.failed} failed",
    )
    return 2 if totals.failed else 0
