"""``docproc``: the embedded all-in-one, a client for ingest and search, and operator commands."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import httpx
import typer
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_common.errors import AppError
from docproc_common.observability import configure_logging
from docproc_common.settings import AuthSettings, MissingKeyError, get_settings
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from docproc_cli import uploads

if TYPE_CHECKING:
    from docproc_common.operator_content import Totals
    from docproc_common.runtime import Runtime

# Each command imports what it alone needs (the operator commands' database and storage,
# the MCP SDK, Kafka's client): `docproc mcp`, started by a desktop agent, loads in about
# a second instead of three.

T = TypeVar("T")
app = typer.Typer(
    help="docproc: file processing for chat and knowledge bases.", no_args_is_help=True
)
console = Console()

UrlOpt = Annotated[str, typer.Option("--url", envvar="DOCPROC_URL", help="docproc API base URL")]
DEFAULT_URL = "http://127.0.0.1:8000"
#: The collection a command uses when none is named (never ``documents``: that is the
#: tracking table's name).
DEFAULT_COLLECTION = "default"
CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help="collection name")]
LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@app.command()
def dev(
    port: Annotated[int, typer.Option(help="HTTP port")] = 8000,
    host: Annotated[str, typer.Option(help="bind address")] = "127.0.0.1",
    dev_sign_in: Annotated[
        bool,
        typer.Option(
            "--dev-sign-in/--no-dev-sign-in",
            help="the console mints tokens for anyone who asks (loopback binds only)",
        ),
    ] = True,
) -> None:
    """Run all five services in one process on embedded Postgres, local storage and the local model."""
    from docproc_cli.embedded import ExposedSignInError, dev_settings, run_dev

    configure_logging()
    try:
        settings = dev_settings(host=host, port=port, dev_sign_in=dev_sign_in)
    except ExposedSignInError as exc:
        console.print(f"[red]error[/red] {exc}")
        raise typer.Exit(2) from None
    console.print(
        f"docproc dev on http://{host}:{port}  (console /console/, OpenAPI /openapi.json, docs /docs)"
    )
    asyncio.run(run_dev(settings))


@app.command()
def token(
    user: Annotated[str, typer.Option(help="user id (sub)")],
    org: Annotated[str | None, typer.Option(help="organization id")] = None,
    permission: Annotated[list[str] | None, typer.Option(help="a permission, repeatable")] = None,
    app_admin: Annotated[bool, typer.Option("--app-admin", help="deployment app admin")] = False,
    ttl: Annotated[int, typer.Option(help="lifetime in seconds")] = 3600,
) -> None:
    """Mint a signed bearer token with the configured key (development, scripts, tests)."""
    print(  # noqa: T201 - the token is the output
        mint_token(
            _signing_key(),
            user_id=user,
            organization_id=org,
            permissions=permission or [],
            app_admin=app_admin,
            ttl_s=ttl,
        )
    )


def _signing_key() -> AuthSettings:
    """``AUTH__JWT_SECRET``; with ``ENV=dev``, the development key ``docproc dev`` accepts."""
    auth = get_settings().auth
    try:
        auth.secret()
    except MissingKeyError as exc:
        console.print(f"[red]error[/red] {exc}")
        raise typer.Exit(1) from None
    return auth


def _operator_client(url: str) -> httpx.Client:
    bearer = mint_token(
        _signing_key(),
        user_id="operator",
        permissions=[VIEW, EDIT, SECRETS_VIEW],
        app_admin=True,
    )
    return httpx.Client(
        base_url=url.rstrip("/") + "/api/v1",
        headers={"Authorization": f"Bearer {bearer}"},
        timeout=60,
    )


def _check(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
            message = f"{error['code']}: {error['message']}"
            fields = error.get("details", {}).get("fields")
            if fields:
                message += " (" + "; ".join(f"{f['field']}: {f['message']}" for f in fields) + ")"
        except (ValueError, KeyError, TypeError):
            message = response.text
        console.print(f"[red]error[/red] {response.status_code} {message}")
        raise typer.Exit(1)
    return response.json()


def _knowledge_base(client: httpx.Client, collection: str) -> dict[str, Any]:
    for kb in _check(client.get("/kb")):
        if kb["collection_name"] == collection:
            return dict(kb)
    body = {
        "name": collection,
        "collection_name": collection,
        "scope": "app",
        "embedding_provider": "local",
        "embedding_model": LOCAL_MODEL,
    }
    return dict(_check(client.post("/kb", json=body)))


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
        elif path.is_file():
            out.append(path)
        else:
            console.print(f"[red]no such file or directory:[/red] {path}")
            raise typer.Exit(1)
    return out


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or folders")],
    collection: CollectionOpt = DEFAULT_COLLECTION,
    url: UrlOpt = DEFAULT_URL,
    wait: Annotated[bool, typer.Option(help="wait until indexing is complete")] = True,
    max_wait: Annotated[
        int,
        typer.Option(
            "--max-wait",
            min=0,
            help="seconds one request (a file, a page of the listing, an indexing poll) may "
            "wait on a busy server (503, Retry-After) before giving up",
        ),
    ] = uploads.DEFAULT_MAX_WAIT_S,
) -> None:
    """Upload files (folders recursively) into a collection and show indexing progress.

    A busy server is waited out as its Retry-After says; a file the collection already
    holds (same name and content) is skipped, so running it again finishes an ingest."""
    files = _files(paths)
    from docproc_common.formats import BUILTIN_FORMATS, PARSER_FORMATS

    formats = BUILTIN_FORMATS | PARSER_FORMATS["pymupdf"]
    tally = {"uploaded": 0, "present": 0, "unsupported": 0}
    with _operator_client(url) as client:
        kb = _knowledge_base(client, collection)
        try:
            present = uploads.held(
                client, kb["id"], _check, max_wait_s=max_wait, waiting=_busy_listing
            )
        except uploads.StayedBusyError as busy:
            _gave_up(busy, "list what the collection holds", tally)
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console) as progress:
            upload = progress.add_task("uploading", total=len(files))

            def waiting_on(task: TaskID, doing: str) -> uploads.Waiting:
                def waiting(seconds: float) -> None:
                    """Count the wait down in the bar, so a busy server does not look stuck."""
                    left = seconds
                    while left > 0:
                        progress.update(
                            task,
                            description=f"{doing}: server busy, retrying in {math.ceil(left)} s",
                        )
                        time.sleep(min(1.0, left))
                        left -= 1.0
                    progress.update(task, description=doing)

                return waiting

            for path in files:
                if path.suffix.lower().lstrip(".") not in formats:
                    tally["unsupported"] += 1
                elif (key := uploads.key(path)) in present:
                    tally["present"] += 1
                else:
                    try:
                        sent = uploads.send(
                            client,
                            kb["id"],
                            path,
                            max_wait_s=max_wait,
                            waiting=waiting_on(upload, "uploading"),
                        )
                    except uploads.StayedBusyError as busy:
                        progress.stop()
                        _gave_up(busy, f"take {path}", tally)
                    _check(sent)
                    present.add(key)
                    tally["uploaded"] += 1
                progress.advance(upload)
            counts = (
                f"{tally['uploaded']} uploaded, {tally['present']} already present, "
                f"{tally['unsupported']} skipped (unsupported type)"
            )
            if not wait:
                console.print(f"{counts} in collection [bold]{collection}[/bold]")
                return
            indexing = progress.add_task("indexing", total=None)
            while True:
                try:
                    answer = uploads.patiently(
                        lambda: client.get(f"/kb/{kb['id']}/ingestion"),
                        max_wait_s=max_wait,
                        waiting=waiting_on(indexing, "indexing"),
                    )
                except uploads.StayedBusyError as busy:
                    progress.stop()
                    _gave_up(busy, "tell how indexing goes", tally)
                state = _check(answer)
                done = state["indexed_count"] + state["failed_count"]
                progress.update(indexing, total=state["document_count"], completed=done)
                if state["indexing_status"] == "complete":
                    break
                time.sleep(0.5)
    console.print(
        f"{counts}; {state['indexed_count']} indexed, {state['failed_count']} failed "
        f"in collection [bold]{collection}[/bold]"
    )
    if state["failed_count"]:
        sys.exit(2)


def _busy_listing(seconds: float) -> None:
    console.print(f"listing what the collection holds: server busy, retrying in {seconds:.0f} s")
    time.sleep(seconds)


def _gave_up(busy: uploads.StayedBusyError, doing: str, tally: dict[str, int]) -> NoReturn:
    """Exit 1 naming what was done, and that running the command again goes on from there."""
    try:
        why = busy.response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        why = busy.response.text
    console.print(
        f"[red]error[/red] the server was still busy after {busy.waited_s:.0f} s of waiting "
        f"to {doing} ({why}); {tally['uploaded']} uploaded, {tally['present']} already "
        "present. Run the same command again to go on: what the collection holds is skipped."
    )
    raise typer.Exit(1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="what to look for")],
    collection: Annotated[
        list[str] | None, typer.Option("--collection", "-c", help="collection, repeatable")
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k")] = 5,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode", "-m", help="vector, keyword or hybrid (default: hybrid; docs/search.md)"
        ),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
) -> None:
    """Search collections and print the ranked chunks."""
    with _operator_client(url) as client:
        hits = _check(
            client.post(
                "/rag/search",
                json={
                    "query": query,
                    "collections": collection or [DEFAULT_COLLECTION],
                    "top_k": top_k,
                    **({"mode": mode} if mode else {}),
                },
            )
        )
    table = Table("#", "score", "document", "chunk", show_lines=True)
    for rank, hit in enumerate(hits["results"], 1):
        text = " ".join(hit["content"].split())
        table.add_row(
            str(rank), f"{hit['score']:.3f}", f"{hit['filename']} #{hit['chunk_no']}", text[:300]
        )
    console.print(table)


@app.command("mcp")
def mcp(url: UrlOpt = DEFAULT_URL) -> None:
    """Serve the deployment's MCP tools on stdio, for a desktop agent (docs/mcp.md): each
    request goes to URL/mcp with the bearer token in DOCPROC_TOKEN."""
    errors = Console(stderr=True, soft_wrap=True)  # stdout is the MCP wire
    token = os.environ.get("DOCPROC_TOKEN", "").strip()
    if not token:
        errors.print("[red]error[/red] DOCPROC_TOKEN is not set: the bearer token to call with")
        raise typer.Exit(2)
    from docproc_cli import mcp_relay

    configure_logging()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per relayed request
    try:
        asyncio.run(mcp_relay.relay(url, token))
    except mcp_relay.Unreachable as exc:
        errors.print(f"[red]error[/red] {exc}")
        raise typer.Exit(1) from None


def _runtime() -> Runtime:
    """The configured database, or ``docproc dev``'s own (with its settings)."""
    from docproc_common.runtime import Runtime

    from docproc_cli.embedded import dev_settings

    settings = get_settings()
    return Runtime.create(settings if settings.database.url else dev_settings())


def _operator(work: Callable[[Runtime], Awaitable[T]]) -> T:
    async def go() -> T:
        runtime = _runtime()
        try:
            return await work(runtime)
        except AppError as exc:
            console.print(f"[red]refused[/red] {exc.message}")
            raise typer.Exit(1) from exc
        finally:
            await runtime.close()

    return asyncio.run(go())


def _operator_ingest(collection: str, ingest: Callable[[Runtime], Awaitable[Totals]]) -> None:
    """An operator ingest: its totals once every file is settled (how many of the files
    indexed were only re-chunked), and exit 2 when a file failed."""
    totals = _operator(ingest)
    console.print(
        f"{totals.ingested} ingested ({totals.rechunked} re-chunked), {totals.failed} failed "
        f"into [bold]{collection}[/bold]"
    )
    if totals.failed:
        raise typer.Exit(2)


dlq_app = typer.Typer(
    help="Dead letters on Kafka: list them, and re-drive a fixed one once.", no_args_is_help=True
)
app.add_typer(dlq_app, name="dlq")


def _kafka(work: Awaitable[T]) -> T:
    try:
        return asyncio.run(work)  # type: ignore[arg-type]
    except AppError as exc:
        console.print(f"[red]refused[/red] {exc.message}")
        raise typer.Exit(1) from exc


@dlq_app.command("list")
def dlq_list(
    service: Annotated[
        str | None, typer.Option("--service", help="only this stage's dead letters")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per line")] = False,
) -> None:
    """Every dead letter: its address (for replay), origin, failure, attempts and trace."""
    from docproc_cli import dlq

    letters = _kafka(dlq.dead_letters(get_settings().kafka, service))
    if as_json:
        for d in letters:
            print(  # noqa: T201
                json.dumps(
                    {
                        "address": d.address,
                        "topic": d.topic,
                        "service": d.service,
                        "headers": d.headers,
                        "value": d.value.decode(errors="replace"),
                    }
                )
            )
        return
    table = Table("address", "origin", "attempts", "error", "traceparent")
    for d in letters:
        h = d.headers
        table.add_row(
            d.address,
            f"{h.get('x-original-topic', '?')}:{h.get('x-original-partition', '?')}:"
            f"{h.get('x-original-offset', '?')}",
            h.get("x-attempt", "?"),
            f"{h.get('x-error-class', '?')}: {h.get('x-error-message', '')}",
            h.get("traceparent", ""),
        )
    console.print(table)
    console.print(f"{len(letters)} dead letter(s)")


@dlq_app.command("replay")
def dlq_replay(
    address: Annotated[str, typer.Argument(help="<dlq topic>:<partition>:<offset> from dlq list")],
    payload: Annotated[
        Path | None, typer.Option("--payload", help="a corrected message body (JSON file)")
    ] = None,
) -> None:
    """Send one dead letter (or its corrected body) back to its stage as a first attempt,
    once: a dead letter replayed before is refused."""
    from docproc_cli import dlq

    body = payload.read_bytes() if payload is not None else None
    letter = _kafka(dlq.replay(get_settings().kafka, address, body))
    console.print(f"replayed {letter.address} to {letter.topic} for {letter.service}")


@app.command("rag-collections")
def rag_collections() -> None:
    """List every collection name: its knowledge bases, tracked documents and whether a table exists."""
    from docproc_cli import operator

    rows = _operator(operator.rag_collections)
    table = Table("collection", "knowledge bases", "documents", "table")
    for row in rows:
        table.add_row(
            row.name, str(row.knowledge_bases), str(row.documents), "yes" if row.has_table else "no"
        )
    console.print(table)


@app.command("rag-bulk")
def rag_bulk(
    collection: Annotated[str, typer.Argument(help="collection name")],
    finish: Annotated[
        bool, typer.Option("--finish", help="fold it now: build its index, merge, leave")
    ] = False,
) -> None:
    """Put a collection in bulk mode before a large load (a reindex, a first sync): its new
    chunks skip the HNSW index, searches still find them, and the embedder folds it (builds
    the index CONCURRENTLY, merges) once its backlog has drained; --finish folds it now."""
    from docproc_cli import operator

    outcome = _operator(lambda rt: operator.rag_bulk(rt, collection, finish))
    console.print(f"{collection}: {outcome}")


@app.command("rag-keyword-index")
def rag_keyword_index(
    collections: Annotated[
        list[str] | None, typer.Argument(help="collection names (default: every one)")
    ] = None,
) -> None:
    """Add the keyword column and GIN index hybrid search reads to tables created before it.

    The column is added under the table's lock (a rewrite: the collection's writes and
    searches wait for it); the index is then built CONCURRENTLY. Safe to run again.
    """
    from docproc_cli import operator

    changed = _operator(
        lambda rt: operator.rag_keyword_index(
            rt, collections or [], lambda name, what: console.print(f"{name}: {what}")
        )
    )
    console.print(f"{changed} table(s) changed")


@app.command("rag-ingest")
def rag_ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or folders")],
    collection: CollectionOpt = DEFAULT_COLLECTION,
) -> None:
    """Operator ingest from the server shell: chunks no knowledge base owns (writer_kind operator).

    Through the deployment's own pipeline (its parser and embedder must be running:
    `docproc dev`, or the services): each file is stored and queued, and the command waits
    until every one is indexed or failed. Run it again on the same files: a file whose bytes
    and ingestion settings (and the splitter's version) are unchanged is skipped, one whose
    settings changed is re-chunked, a changed one replaces its earlier ingest (matched by
    absolute path). A name reserved by a pending deletion is refused before any file is read.
    """
    from docproc_cli import operator

    files = _files(paths)

    def show(path: Path, outcome: str) -> None:
        console.print(f"{path}: {outcome}")

    _operator_ingest(collection, lambda rt: operator.rag_ingest(rt, files, collection, show))


@app.command("rag-sync-gdrive")
def rag_sync_gdrive(
    folder_id: Annotated[str, typer.Argument(help="the Drive folder's id")],
    collection: CollectionOpt = DEFAULT_COLLECTION,
    credentials_file: Annotated[
        Path | None,
        typer.Option(
            "--credentials-file",
            envvar="GOOGLE_DRIVE_CREDENTIALS_FILE",
            help="the deployment's service-account key file (JSON)",
        ),
    ] = None,
    include_shared_drives: Annotated[
        bool, typer.Option("--include-shared-drives", help="the folder may be in a shared drive")
    ] = False,
    recursive: Annotated[bool, typer.Option(help="also the folder's subfolders")] = True,
    export_format: Annotated[
        str, typer.Option(help="Google Docs/Sheets/Slides as office files or as pdf")
    ] = "office",
) -> None:
    """Operator ingest of a Drive folder with the deployment's service account (operator chunks).

    The sync service's own command (`docproc-sync rag-sync-gdrive`, its Drive connector),
    run here as a child process on this command's database; like rag-ingest, it needs the
    deployment running and waits for the files. The only user of
    GOOGLE_DRIVE_CREDENTIALS_FILE: a sync source authenticates with its own vault secret and
    never with this file. Run it again: an unchanged file is skipped (its bytes and
    settings), a changed one replaces its earlier ingest (matched by gdrive://<id>); nothing
    is deleted.
    """
    if credentials_file is None:
        console.print(
            "[red]refused[/red] rag-sync-gdrive reads the deployment's service account: pass "
            "--credentials-file or set GOOGLE_DRIVE_CREDENTIALS_FILE"
        )
        raise typer.Exit(2)
    try:
        credentials = json.loads(credentials_file.read_text())
    except (OSError, ValueError) as exc:
        console.print(f"[red]refused[/red] {credentials_file} is no readable JSON key file")
        raise typer.Exit(2) from exc
    if not isinstance(credentials, dict):
        console.print(f"[red]refused[/red] {credentials_file} is no service-account key file")
        raise typer.Exit(2)
    env = {**os.environ, "GOOGLE_DRIVE_CREDENTIALS_FILE": str(credentials_file)}
    if not get_settings().database.url:  # docproc dev's own, as the other operator commands
        from docproc_cli.postgres import start_embedded_postgres

        env |= {"ENV": "dev", "DATABASE__URL": start_embedded_postgres()}
    command = [sys.executable, "-m", "docproc_sync", "rag-sync-gdrive", folder_id]
    command += ["--collection", collection, "--export-format", export_format]
    command += ["--include-shared-drives"] if include_shared_drives else []
    command += [] if recursive else ["--no-recursive"]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            typer.echo(line, nl=False)
    raise typer.Exit(child.returncode)


@app.command("rag-drop")
def rag_drop(
    collection: Annotated[str, typer.Argument(help="collection name")],
    knowledge_base: Annotated[
        str | None, typer.Option("--knowledge-base", help="the knowledge base to empty")
    ] = None,
) -> None:
    """Empty the knowledge base on a name (or remove a name no base holds) through the same
    durable teardown as the API; the last base's table is dropped whatever it holds."""
    from docproc_cli import operator

    kb_id = uuid.UUID(knowledge_base) if knowledge_base else None
    console.print(_operator(lambda rt: operator.rag_drop(rt, collection, kb_id)))


@app.command("rag-unfiled-provenance")
def rag_unfiled_provenance(
    collection: Annotated[str, typer.Argument(help="collection name")],
    confirm_operator: Annotated[
        bool,
        typer.Option(
            "--confirm-operator",
            help="mark the global unfiled content of unknown origin as the operator's import",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", help="answer the confirmation (for automation)")
    ] = False,
) -> None:
    """Audit who wrote a name's unfiled content: aggregate counts from the database, never content.

    With --confirm-operator, and only after inspecting the source and confirming that the
    global unfiled content of unknown origin is an operator import for every
    organization, it is marked as the operator's (writer_kind operator), which an
    app-scoped base adopts. Atomic and repeatable; content of known document origin is
    skipped. Keep doubtful data isolated: re-import it into its base or rag-drop it.
    """
    from docproc_cli import operator

    if yes and not confirm_operator:
        console.print("[red]refused[/red] --yes answers the confirmation of --confirm-operator")
        raise typer.Exit(2)
    found = _operator(lambda rt: operator.unfiled_provenance(rt, collection))
    table = Table("unfiled content", "document", "operator", "unknown")
    for label, counts in (
        ("global chunks", found.global_chunks),
        ("global rows", found.global_rows),
    ):
        table.add_row(label, *(str(counts.get(k, 0)) for k in ("document", "operator", "unknown")))
    console.print(
        f"[bold]{collection}[/bold]: {found.knowledge_bases} knowledge bases "
        f"({found.app_bases} app-scoped), table: {'yes' if found.has_table else 'no'}"
    )
    console.print(table)
    console.print(
        f"organizations' unfiled content (read by their tenant, never adopted): "
        f"{found.org_chunks} chunks, {found.org_rows} rows"
    )
    if not confirm_operator:
        return
    unknown = found.global_chunks.get("unknown", 0) + found.global_rows.get("unknown", 0)
    if not unknown:
        console.print("nothing of unknown origin to confirm")
        return
    if not yes and not typer.confirm(
        f"Mark {found.global_chunks.get('unknown', 0)} chunks and "
        f"{found.global_rows.get('unknown', 0)} rows of unknown origin in {collection} as the "
        "operator's import for every organization?"
    ):
        console.print("nothing changed")
        raise typer.Exit(1)
    chunks, rows = _operator(lambda rt: operator.confirm_operator(rt, collection))
    console.print(f"confirmed as the operator's: {chunks} chunks, {rows} rows")


@app.command()
def doctor() -> None:
    """Report the storage backend, whether encryption at rest is on, and the bus mode."""
    from docproc_common.storage import create_storage

    settings = get_settings()
    storage = create_storage(settings.storage)
    console.print(f"storage backend: {storage.backend}")
    if storage.backend == "s3":
        kms = (
            f" (KMS key {settings.storage.s3_kms_key_id})" if settings.storage.s3_kms_key_id else ""
        )
        console.print(f"encryption at rest: on, {settings.storage.s3_sse}{kms}")
    else:
        console.print("encryption at rest: the volume's own (local backend)")
    console.print(f"bus: {settings.bus.mode.value}")
    console.print(f"database: {'configured' if settings.database.url else 'embedded'}")


if __name__ == "__main__":
    app()
