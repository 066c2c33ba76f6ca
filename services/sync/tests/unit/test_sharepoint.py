"""The sharepoint connector's config checks, its delta tree and Graph's Retry-After."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.config import CREDENTIAL_REFUSAL, check_config
from docproc_common.errors import InvalidInput
from docproc_common.vault import validate_value
from docproc_sync.connectors.msgraph import MAX_WAIT_S, retry_wait
from docproc_sync.connectors.sharepoint import Node, Tree, apply_delta, item_version
from docproc_testing.connectors import refused_fields

OPTIONS = ConnectorOptions()
HOST = "contoso.sharepoint.com"
SITE_ID = f"{HOST},2c712604-1370-44e7-a1f5-426573fda80a,2d2244c3-251a-49ea-93a8-39e1c3a060fe"


class TestSecret:
    def test_the_value_is_checked_naming_each_field(self) -> None:
        with pytest.raises(InvalidInput) as caught:
            validate_value("ms_graph_app", {"tenant_id": "../x", "client_id": "me"})
        named = {f["field"] for f in caught.value.envelope()["error"]["details"]["fields"]}
        assert named == {"value.tenant_id", "value.client_id", "value.client_secret"}
        assert "../x" not in str(caught.value.envelope())

    def test_a_tenant_is_its_id_or_a_domain(self) -> None:
        for tenant in ("72f988bf-86f1-41af-91ab-2d7cd011db47", "contoso.onmicrosoft.com"):
            value = {
                "tenant_id": tenant,
                "client_id": "48d31887-5fad-4d73-a9f5-3c356e68a038",
                "client_secret": "s",
            }
            assert validate_value("ms_graph_app", value) == value


class TestConfig:
    @pytest.mark.parametrize(
        "config",
        [
            {"hostname": HOST},
            {"hostname": HOST, "site_path": "/sites/handbook", "folder_path": "Policies/HR"},
            {"site_id": SITE_ID, "drive": "Contracts 2024"},
            {"site_id": SITE_ID, "drive": "b!" + "A" * 64},
            {"user_id": "adele@contoso.onmicrosoft.com", "folder_path": "/Notes/"},
            {"user_id": "48d31887-5fad-4d73-a9f5-3c356e68a038"},
        ],
    )
    def test_accepted(self, config: dict[str, Any]) -> None:
        check_config("sharepoint", config, OPTIONS)

    @pytest.mark.parametrize(
        ("config", "field"),
        [
            ({}, "config.hostname"),
            ({"hostname": "https://contoso.sharepoint.com"}, "config.hostname"),
            ({"hostname": "127.0.0.1"}, "config.hostname"),
            ({"hostname": "localhost"}, "config.hostname"),
            ({"hostname": "contoso.sharepoint.com/sites/x"}, "config.hostname"),
            ({"hostname": HOST, "site_path": "sites/x"}, "config.site_path"),
            ({"hostname": HOST, "site_path": "/sites/../admin"}, "config.site_path"),
            ({"hostname": HOST, "site_path": "/sites/x:/y"}, "config.site_path"),
            ({"site_id": "contoso.sharepoint.com,not-a-guid,x"}, "config.site_id"),
            ({"site_id": SITE_ID, "hostname": HOST}, "config.site_id"),
            ({"hostname": HOST, "drive": "../Documents"}, "config.drive"),
            ({"hostname": HOST, "drive": "a/b"}, "config.drive"),
            ({"hostname": HOST, "folder_path": "../../etc"}, "config.folder_path"),
            ({"hostname": HOST, "folder_path": "a//b"}, "config.folder_path"),
            ({"hostname": HOST, "folder_path": "a/./b"}, "config.folder_path"),
            ({"hostname": HOST, "folder_path": "a/b?x=1"}, "config.folder_path"),
            ({"hostname": HOST, "folder_path": "a:/b"}, "config.folder_path"),
            ({"user_id": "adele@contoso.onmicrosoft.com", "hostname": HOST}, "config.user_id"),
            ({"user_id": "adele@contoso.onmicrosoft.com", "drive": "Documents"}, "config.drive"),
            ({"user_id": "../me"}, "config.user_id"),
            ({"hostname": HOST, "library": "x"}, "config.library"),
        ],
    )
    def test_refused_naming_the_field(self, config: dict[str, Any], field: str) -> None:
        assert [f["field"] for f in refused_fields("sharepoint", config)] == [field]

    @pytest.mark.parametrize("key", ["client_secret", "tenant_id", "client_id", "access_token"])
    def test_a_credential_is_refused_by_name(self, key: str) -> None:
        (found,) = refused_fields("sharepoint", {"hostname": HOST, key: "x"})
        assert found == {"field": f"config.{key}", "message": CREDENTIAL_REFUSAL}


def item(item_id: str, name: str, parent: str | None, **facets: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": item_id, "name": name, **facets}
    if parent is not None:
        out["parentReference"] = {"id": parent}
    return out


class TestDeltaTree:
    def test_paths_moves_renames_and_deletions_by_id(self) -> None:
        nodes: dict[str, Node] = {}
        apply_delta(
            nodes,
            [
                item("r", "root", None, root={}, folder={}),
                item("f", "Policies", "r", folder={}),
                item("o", "Other", "r", folder={}),
                item("1", "a.md", "f", file={}, cTag='"c:1"', size=3),
                item("2", "b.md", "o", file={}, cTag='"c:2"'),
            ],
        )
        tree = Tree(nodes, "f")
        assert [(r.address, r.name, r.version) for r in tree.files("d")] == [
            ("sharepoint://d/Policies/a.md", "a.md", '"c:1"')
        ]
        # the folder renamed (delta names only it), b.md moved in, a.md deleted
        apply_delta(
            nodes,
            [
                item("f", "Rules", "r", folder={}),
                item("2", "b.md", "f", file={}, cTag='"c:2"'),
                {"id": "1", "deleted": {"state": "deleted"}},
            ],
        )
        assert [r.address for r in Tree(nodes, "f").files("d")] == ["sharepoint://d/Rules/b.md"]
        assert [r.address for r in Tree(nodes, "r").files("d")] == ["sharepoint://d/Rules/b.md"]

    def test_orphans_and_cycles_have_no_path(self) -> None:
        nodes = {
            "r": Node("root", None, True),
            "x": Node("x.md", "gone", False),
            "a": Node("a", "b", True),
            "b": Node("b", "a", True),
            "c": Node("c.md", "a", False),
        }
        tree = Tree(nodes, "r")
        assert tree.files("d") == []
        assert tree.place("c") is None and tree.place("x") is None

    def test_a_separator_in_a_name_is_encoded_in_the_address(self) -> None:
        nodes = {"r": Node("root", None, True), "1": Node("a/b%.md", "r", False)}
        (remote,) = Tree(nodes, "r").files("d")
        assert (remote.address, remote.name) == ("sharepoint://d/a%2Fb%25.md", "a/b%.md")

    def test_version_prefers_ctag_then_graphs_hash_then_etag(self) -> None:
        assert item_version({"cTag": "c", "eTag": "e"}) == "c"
        assert item_version({"file": {"hashes": {"quickXorHash": "q"}}, "eTag": "e"}) == (
            "quickXorHash:q"
        )
        assert item_version({"eTag": "e"}) == "e"
        assert item_version({}) is None


class TestRetryAfter:
    def test_seconds_dates_and_caps(self) -> None:
        assert retry_wait("3", 0) == 3.0
        assert retry_wait("100000", 0) == MAX_WAIT_S
        later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
        assert 8.0 <= retry_wait(later, 0) <= 10.0
        assert retry_wait("Wed, 21 Oct 2015 07:28:00 GMT", 0) == 0.0

    def test_backoff_without_a_header_grows_and_is_bounded(self) -> None:
        assert 0.5 <= retry_wait(None, 0) <= 1.0
        assert 4.0 <= retry_wait("soon", 3) <= 8.0
        assert retry_wait(None, 30) <= MAX_WAIT_S
