"""Every connector names the fields that say where its credential is sent
(``ConnectorSpec.DESTINATION_FIELDS``): re-pointing one while a secret is bound needs what
binding the secret needs (``docproc_upload.sync_sources.service.update_source``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from docproc_common.connectors import CONNECTORS
from docproc_upload.sync_sources.service import destination_changes

#: A field whose name says it addresses something, per connector, that is not a destination
#: of the credential, and why.
NOT_DESTINATIONS = {
    ("gcs", "bucket"): "a path on the JSON API's host, Google's or endpoint_url",
    ("sharepoint", "folder_path"): "a folder of the drive the site or user_id names",
    ("web", "path_prefix"): "narrows the crawl of start_url's site; no credential anyway",
}
ADDRESS_LIKE = re.compile(r"url|host|endpoint|site|drive|bucket|account|tenant|user|path")


@pytest.mark.parametrize("name", sorted(CONNECTORS))
def test_every_connector_declares_its_destinations(name: str) -> None:
    cls = CONNECTORS[name]
    declared = cls.DESTINATION_FIELDS  # no default on ConnectorSpec: forgetting it raises
    fields = set(cls.CONFIG_MODEL.model_fields)
    assert declared and declared <= fields
    for field in fields - declared:
        assert not ADDRESS_LIKE.search(field) or (name, field) in NOT_DESTINATIONS, (
            f"{name}.{field} reads like an address: declare it in DESTINATION_FIELDS "
            "or say in NOT_DESTINATIONS why it is not one"
        )


@pytest.mark.parametrize(
    ("connector", "before", "after", "changed"),
    [
        ("s3", {"bucket": "a"}, {"bucket": "a", "prefix": "p/"}, []),
        ("s3", {"bucket": "a"}, {"bucket": "a", "region": None}, []),  # unset is the default
        (
            "s3",
            {"bucket": "a"},
            {"bucket": "b", "endpoint_url": "https://e"},
            ["bucket", "endpoint_url"],
        ),
        (
            "google_drive",
            {"folder_id": "f"},
            {"folder_id": "f", "include_shared_drives": False},
            [],
        ),
        (
            "google_drive",
            {"folder_id": "f"},
            {"folder_id": "f", "include_shared_drives": True},
            ["include_shared_drives"],
        ),
        ("sharepoint", {"hostname": "a.b.com"}, {"site_id": "x"}, ["hostname", "site_id"]),
        ("sharepoint", {"user_id": "u@a.com"}, {"user_id": "u@a.com", "folder_path": "/x"}, []),
    ],
)
def test_destination_changes(
    connector: str, before: dict[str, Any], after: dict[str, Any], changed: list[str]
) -> None:
    assert destination_changes(CONNECTORS[connector], before, after) == changed
