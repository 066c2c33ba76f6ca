"""The MCP server at ``/mcp`` (docs/mcp.md), driven by the SDK's own client over a real
socket, on the whole pipeline in-process: each tool answers what its route answers, a base
of another organisation is refused as the route refuses it, a request without a valid token
is refused before the MCP layer; and ``docproc mcp`` relays stdio to it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from docproc_common.auth import mint_token
from docproc_common.runtime import Runtime, build_app
from docproc_testing.auth import DEV_AUTH
from docproc_testing.documents import make_pdf
from docproc_testing.servers import serving_app
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextResourceContents

from .conftest import Client as ApiClient
from .test_tenancy import EDIT, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration

ALICE = ("alice", "acme", (VIEW, EDIT))
BOB = ("bob", "globex", (VIEW, EDIT))
TOOLS = {"list_knowledge_bases", "search", "read_document", "get_chunk_context", "upload_text"}
SMALL_CHUNKS = {"chunk_size": 40, "chunk_overlap": 0}
#: A note of several chunks (the default chunk is 2,500 characters).
NOTE = "\n\n".join(
    f"Lighthouse log {n}: the keeper trimmed the wick, wound the clockwork and noted the "
    f"fog over the reef at dawn. " * 8
    for n in range(6)
)


def token(user: str, org: str | None, perms: tuple[str, ...]) -> str:
    return mint_token(DEV_AUTH, user_id=user, organization_id=org, permissions=list(perms))


@asynccontextmanager
async def mcp(url: str, bearer: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


@pytest.fixture(scope="module")
async def url(runtime: Runtime, pipeline: list[Any]) -> AsyncIterator[str]:
    """The app with every service, on a port of 127.0.0.1 (the pipeline stops ``/mcp``)."""
    async with serving_app(build_app(runtime, pipeline, [], "docproc-test")) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
async def world(client: ApiClient, url: str) -> dict[str, Any]:
    """alice's base (a two-page PDF by the route, a note by ``upload_text``) and bob's base
    of another organisation (a text), all indexed."""
    alice, bob = client(*ALICE), client(*BOB)
    mine = await create(alice, uniq("mcp_notes"))
    theirs = await create(bob, uniq("mcp_globex"))
    pdf = make_pdf(["The atlas shows the lighthouse.", "The tide tables for the harbour."])
    r = await alice.post(
        f"/kb/{mine['id']}/documents",
        files={"file": ("atlas.pdf", pdf)},
        data={"ingestion": json.dumps(SMALL_CHUNKS)},  # a chunk begins on each page
    )
    assert r.status_code == 202, r.text
    async with mcp(url, token(*ALICE)) as session:
        note = await session.call_tool(
            "upload_text",
            {"knowledge_base_id": mine["id"], "filename": "keeper.md", "text": NOTE},
        )
    assert not note.is_error, note.content
    r = await bob.post(
        f"/kb/{theirs['id']}/documents", files={"file": ("secret.txt", b"Globex lighthouse plans")}
    )
    assert r.status_code == 202, r.text
    bobs_doc = r.json()["tracking_id"]
    await wait_complete(alice, mine["id"])
    await wait_complete(bob, theirs["id"])
    docs = {
        d["filename"]: d for d in (await alice.get(f"/kb/{mine['id']}/documents")).json()["items"]
    }
    assert {d["status"] for d in docs.values()} == {"done"}, docs
    return {
        "alice": alice,
        "bob": bob,
        "mine": mine,
        "theirs": theirs,
        "pdf": docs["atlas.pdf"],
        "note": docs["keeper.md"],
        "note_answer": note.structured_content,
        "bobs_doc": bobs_doc,
    }


def answer(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def refused(result: CallToolResult) -> dict[str, Any]:
    """The envelope of a refused call; its message is the tool error's text."""
    assert result.is_error
    assert result.structured_content is None  # a client checks it against the output schema
    assert result.meta is not None
    envelope = result.meta["docproc/error"]
    assert isinstance(envelope, dict)
    assert [c.text for c in result.content if c.type == "text"] == [envelope["error"]["message"]]
    return envelope


async def test_lists_tools_and_the_callers_bases_as_resources(
    url: str, world: dict[str, Any]
) -> None:
    async with mcp(url, token(*ALICE)) as session:
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        assert all(t.input_schema["type"] == "object" and t.description for t in tools)
        resources = (await session.list_resources()).resources
        uris = {r.uri for r in resources}
        assert f"docproc://knowledge-bases/{world['mine']['id']}" in uris
        assert f"docproc://knowledge-bases/{world['theirs']['id']}" not in uris
        read = await session.read_resource(f"docproc://knowledge-bases/{world['mine']['id']}")
        assert isinstance(read.contents[0], TextResourceContents)
        body = json.loads(read.contents[0].text)
        assert body["knowledge_base"]["status"]["indexed_count"] == 2
        assert {d["filename"] for d in body["documents"]["items"]} == {"atlas.pdf", "keeper.md"}
        with pytest.raises(MCPError, match="Collection not found"):
            await session.read_resource(f"docproc://knowledge-bases/{world['theirs']['id']}")

        listed = answer(await session.call_tool("list_knowledge_bases", {}))["knowledge_bases"]
    mine = next(kb for kb in listed if kb["id"] == world["mine"]["id"])
    assert mine["status"]["indexed_count"] == 2
    assert "2 of 2 documents indexed" in mine["description"]
    assert world["theirs"]["id"] not in {kb["id"] for kb in listed}
    assert {kb["id"] for kb in listed} == {
        kb["id"] for kb in (await world["alice"].get("/kb")).json()
    }


async def test_search_answers_what_the_route_answers_with_citations(
    url: str, world: dict[str, Any]
) -> None:
    body = {"query": "tide tables harbour", "knowledge_base_ids": [world["mine"]["id"]], "top_k": 3}
    async with mcp(url, token(*ALICE)) as session:
        by_id = answer(await session.call_tool("search", body))["results"]
        by_name = answer(
            await session.call_tool(
                "search",
                {"query": "tide tables harbour", "collections": [world["mine"]["collection_name"]]},
            )
        )["results"]
        cited_page = answer(
            await session.call_tool(
                "read_document",
                {"document_id": by_id[0]["document_id"], "page": by_id[0]["page_start"]},
            )
        )["page"]
    route = (await world["alice"].post("/rag/search", json=body)).json()["results"]
    assert [(h["document_id"], h["chunk_no"]) for h in by_id] == [
        (h["document_id"], h["chunk_no"]) for h in route
    ]
    top = by_id[0]
    assert (top["document_id"], top["filename"]) == (world["pdf"]["id"], "atlas.pdf")
    assert "chunk_no" in top and "collection_name" in top
    assert by_name[0]["document_id"] == world["pdf"]["id"]
    # the citation: the PDF's second page, whose text the offsets slice, and read_document's
    # page of that number holds the chunk
    assert (top["page_start"], top["page_end"], top["crosses_pages"]) == (2, 2, False)
    assert (top["char_start"], top["char_end"]) == (0, len(top["content"]))
    assert top["links"]["parsed"].endswith(f"/documents/{world['pdf']['id']}/parsed#page=2")
    assert top["content"] in cited_page["chunks"]
    assert by_id == route


async def test_read_document_by_window_and_by_page(url: str, world: dict[str, Any]) -> None:
    note, pdf = world["note"], world["pdf"]
    async with mcp(url, token(*ALICE)) as session:
        first = answer(
            await session.call_tool("read_document", {"document_id": note["id"], "limit": 1000})
        )
        rest = answer(
            await session.call_tool(
                "read_document", {"document_id": note["id"], "offset": first["next_offset"]}
            )
        )
        page = answer(
            await session.call_tool("read_document", {"document_id": pdf["id"], "page": 2})
        )
        beyond = refused(
            await session.call_tool("read_document", {"document_id": pdf["id"], "page": 3})
        )
    route = (await world["alice"].get(f"/rag/documents/{note['id']}")).json()
    assert first["content"] + rest["content"] == route["content"]
    assert (first["next_offset"], rest["next_offset"]) == (1000, None)
    assert first["content_length"] == route["content_length"]
    assert page["page_count"] == 2
    assert "tide tables" in " ".join(page["page"]["chunks"])
    assert beyond["error"]["details"]["fields"][0]["field"] == "page"


async def test_chunk_context_around_a_hit(url: str, world: dict[str, Any]) -> None:
    note = world["note"]
    assert note["chunk_count"] >= 3
    async with mcp(url, token(*ALICE)) as session:
        around = answer(
            await session.call_tool(
                "get_chunk_context",
                {"document_id": note["id"], "chunk_no": 1, "before": 1, "after": 1},
            )
        )
        past_the_end = refused(
            await session.call_tool(
                "get_chunk_context", {"document_id": note["id"], "chunk_no": note["chunk_count"]}
            )
        )
    route = await world["alice"].get(
        f"/rag/documents/{note['id']}/chunks", params={"chunk_no": 1, "before": 1, "after": 1}
    )
    assert route.status_code == 200, route.text
    assert around == route.json()
    assert [c["chunk_no"] for c in around["chunks"]] == [0, 1, 2]
    assert past_the_end["error"]["code"] == "NOT_FOUND"


async def test_upload_text_is_an_upload(world: dict[str, Any]) -> None:
    accepted = world["note_answer"]
    assert accepted["status"] == "processing"
    assert accepted["tracking_id"] == world["note"]["id"]
    assert world["note"]["filetype"] == "md"
    assert world["note"]["source"] == "upload"


async def test_another_organisations_base_is_refused_as_the_route_refuses_it(
    url: str, world: dict[str, Any]
) -> None:
    theirs, alice = world["theirs"], world["alice"]
    search = {"query": "lighthouse plans", "knowledge_base_ids": [theirs["id"]]}
    async with mcp(url, token(*ALICE)) as session:
        calls = {
            "search": await session.call_tool("search", search),
            "read": await session.call_tool("read_document", {"document_id": world["bobs_doc"]}),
            "context": await session.call_tool(
                "get_chunk_context", {"document_id": world["bobs_doc"], "chunk_no": 0}
            ),
            "upload": await session.call_tool(
                "upload_text",
                {"knowledge_base_id": theirs["id"], "filename": "x.md", "text": "mine now"},
            ),
        }
    routes = {
        "search": await alice.post("/rag/search", json=search),
        "read": await alice.get(f"/rag/documents/{world['bobs_doc']}"),
        "context": await alice.get(
            f"/rag/documents/{world['bobs_doc']}/chunks", params={"chunk_no": 0}
        ),
        "upload": await alice.post(
            f"/kb/{theirs['id']}/documents", files={"file": ("x.md", b"mine now")}
        ),
    }
    for name, result in calls.items():
        assert routes[name].status_code == 404, (name, routes[name].text)
        assert refused(result) == routes[name].json(), name
    assert refused(calls["search"])["error"]["message"] == "Collection not found"
    # bob's base holds nothing of alice's
    docs = (await world["bob"].get(f"/kb/{theirs['id']}/documents")).json()["items"]
    assert [d["filename"] for d in docs] == ["secret.txt"]


async def test_invalid_arguments_name_their_fields(url: str, world: dict[str, Any]) -> None:
    async with mcp(url, token(*ALICE)) as session:
        bad = refused(
            await session.call_tool(
                "upload_text",
                {"knowledge_base_id": world["mine"]["id"], "filename": "x.exe", "text": "hi"},
            )
        )
        both = refused(
            await session.call_tool(
                "search",
                {
                    "query": "x",
                    "knowledge_base_ids": [world["mine"]["id"]],
                    "collections": [world["mine"]["collection_name"]],
                },
            )
        )
        with pytest.raises(MCPError, match="Unknown tool"):
            await session.call_tool("drop_everything", {})
    assert bad["error"]["code"] == "VALIDATION_ERROR"  # as a route's 422
    assert [f["field"] for f in bad["error"]["details"]["fields"]] == ["filename"]
    assert [f["field"] for f in both["error"]["details"]["fields"]] == ["knowledge_base_ids"]


@pytest.mark.parametrize("bearer", [None, "not-a-token"])
async def test_no_valid_token_no_mcp(url: str, bearer: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    async with httpx.AsyncClient() as http:
        r = await http.post(
            f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
        )
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    refusal = r.json()["error"]
    assert refusal["data"]["error"]["code"] == "UNAUTHORIZED"
    message = "Invalid or expired token" if bearer else "A bearer token is required"
    assert refusal["message"] == refusal["data"]["error"]["message"] == message
    with pytest.RaisesGroup(pytest.RaisesExc(MCPError, match=message), flatten_subgroups=True):
        async with mcp(url, bearer):
            pass


def docproc() -> str:
    return str(Path(sys.executable).parent / "docproc")


async def test_docproc_mcp_relays_stdio(url: str, world: dict[str, Any]) -> None:
    env = {**os.environ, "DOCPROC_TOKEN": token(*ALICE)}
    server = StdioServerParameters(command=docproc(), args=["mcp", "--url", url], env=env)
    async with Client(server) as session:
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        hits = answer(
            await session.call_tool(
                "search",
                {"query": "tide tables harbour", "knowledge_base_ids": [world["mine"]["id"]]},
            )
        )["results"]
        assert hits[0]["document_id"] == world["pdf"]["id"]
        refusal = await session.call_tool(
            "search", {"query": "plans", "knowledge_base_ids": [world["theirs"]["id"]]}
        )
        assert refused(refusal)["error"]["message"] == "Collection not found"


async def test_docproc_mcp_refuses_to_start_on_a_token_the_deployment_refuses(url: str) -> None:
    process = await asyncio.create_subprocess_exec(
        docproc(),
        "mcp",
        "--url",
        url,
        env={**os.environ, "DOCPROC_TOKEN": "not-a-token"},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert (process.returncode, out) == (1, b"")
    assert b"refused or did not answer: Invalid or expired token" in err, err


INSPECTOR = Path(__file__).parent / "mcp_inspector"


@pytest.fixture(scope="module")
def inspector_cli() -> Path:
    """The MCP Inspector (npm ``@modelcontextprotocol/inspector``, pinned in the lockfile of
    ``mcp_inspector/``), installed from its lockfile once."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm (Node.js) is not installed: the MCP Inspector runs on it")
    if not (INSPECTOR / "node_modules" / ".package-lock.json").exists():
        npm = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=INSPECTOR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert npm.returncode == 0, npm.stderr
    return INSPECTOR / "node_modules" / ".bin" / "mcp-inspector"


async def inspect(cli: Path, url: str, bearer: str, *args: str) -> tuple[int, Any, str]:
    """``mcp-inspector --cli`` on ``url``'s ``/mcp`` as ``bearer``: its exit code, its
    answer (JSON) and its stderr."""
    process = await asyncio.create_subprocess_exec(
        str(cli),
        "--cli",
        f"{url}/mcp",
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {bearer}",
        *args,
        cwd=INSPECTOR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, json.loads(out) if out.strip() else None, err.decode()


async def test_the_mcp_inspector_lists_searches_and_is_refused(
    inspector_cli: Path, url: str, world: dict[str, Any]
) -> None:
    alice = token(*ALICE)
    code, listed, err = await inspect(inspector_cli, url, alice, "--method", "tools/list")
    assert code == 0, err
    assert {t["name"] for t in listed["tools"]} == TOOLS

    async def search(kb: dict[str, Any]) -> tuple[int, Any, str]:
        return await inspect(
            inspector_cli,
            url,
            alice,
            "--method",
            "tools/call",
            "--tool-name",
            "search",
            "--tool-arg",
            "query=tide tables harbour",
            f'knowledge_base_ids=["{kb["id"]}"]',
        )

    code, found, err = await search(world["mine"])
    assert code == 0, err
    assert not found["isError"]
    top = found["structuredContent"]["results"][0]
    assert (top["document_id"], top["filename"]) == (world["pdf"]["id"], "atlas.pdf")
    code, theirs, err = await search(world["theirs"])
    assert code != 0, "the Inspector exits non-zero on a tool error"
    assert theirs["isError"], theirs
    assert theirs["content"] == [{"type": "text", "text": "Collection not found"}]
