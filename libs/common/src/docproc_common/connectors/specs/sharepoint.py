"""SharePoint / OneDrive: the configuration the API checks (the connector runs in ``docproc_sync.connectors.sharepoint``)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.vault import GUID

_HOST = r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}"


HOSTNAME = re.compile(rf"^(?=.{{4,253}}$){_HOST}$")


SITE_ID = re.compile(rf"^{_HOST},{GUID},{GUID}$")


DRIVE_ID = re.compile(r"^b![A-Za-z0-9_-]{20,200}$")


USER_ID = re.compile(rf"^(?:{GUID}|[A-Za-z0-9._+-]{{1,64}}@{_HOST})$", re.IGNORECASE)


#: SharePoint refuses these in a name; ``:`` would also end Graph's ``root:/path:`` syntax
_NAME_FORBIDDEN = re.compile(r'["*:<>?\\|\x00-\x1f\x7f]')


def _segments_refusal(path: str, what: str) -> str | None:
    """Why a ``/``-separated path is not plain names (``..``, ``.``, an empty or odd segment)."""
    for segment in path.split("/"):
        if segment in {"", ".", ".."}:
            return f"The {what} is folder names separated by /, without '.', '..' or '//'"
        if _NAME_FORBIDDEN.search(segment) or segment != segment.strip():
            return (
                f"A name in the {what} has a character SharePoint does not allow "
                '(" * : < > ? \\ |, a control character, a leading or trailing space)'
            )
    return None


class SharePointConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="SharePoint or OneDrive")

    hostname: str | None = Field(
        default=None, max_length=253, description="The SharePoint host, contoso.sharepoint.com"
    )
    site_path: str = Field(
        default="",
        max_length=400,
        description="The site's server-relative path, /sites/handbook (empty: the root site)",
    )
    site_id: str | None = Field(
        default=None,
        max_length=400,
        description="Or the site's Graph id (hostname,site-collection-id,web-id)",
    )
    drive: str | None = Field(
        default=None,
        max_length=256,
        description="A document library of the site, by name or drive id "
        "(default: the site's default library, Documents)",
    )
    user_id: str | None = Field(
        default=None,
        max_length=320,
        description="Or a user's OneDrive: their object id or user principal name",
    )
    folder_path: str = Field(
        default="",
        max_length=1000,
        description="Only this folder of the drive and below (empty: the whole drive)",
    )


class SharePointSpec(ConnectorSpec):
    NAME = "sharepoint"
    TITLE = "SharePoint / OneDrive"
    DESCRIPTION = (
        "Files of a SharePoint document library or a user's OneDrive, through Microsoft Graph"
    )
    CONFIG_MODEL = SharePointConfig
    SECRET_KIND = "ms_graph_app"
    #: The tenant is the secret's; the site (by host and path, or id), the drive, or a user's
    #: OneDrive are where in it the token reads
    DESTINATION_FIELDS = frozenset({"hostname", "site_path", "site_id", "drive", "user_id"})
    CHANGE_SIGNAL = "Graph delta link, then cTag"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:  # noqa: ARG003
        assert isinstance(config, SharePointConfig)
        site = config.hostname is not None or config.site_id is not None
        if config.user_id is not None:
            if site or config.site_path:
                return ConfigRefusal(
                    "A user's OneDrive and a site are two sources: name one of them", "user_id"
                )
            if config.drive is not None:
                return ConfigRefusal(
                    "A user's OneDrive is their one drive: leave drive empty", "drive"
                )
            if not USER_ID.fullmatch(config.user_id):
                return ConfigRefusal(
                    "A user is their object id (a GUID) or user principal name", "user_id"
                )
        elif not site:
            return ConfigRefusal(
                "Name a site (hostname and site_path, or site_id) or a user's OneDrive (user_id)",
                "hostname",
            )
        if config.site_id is not None:
            if config.hostname is not None or config.site_path:
                return ConfigRefusal(
                    "A site is its id or its hostname and path, not both", "site_id"
                )
            if not SITE_ID.fullmatch(config.site_id):
                return ConfigRefusal(
                    "A site id is hostname,site-collection-id,web-id as Graph writes it", "site_id"
                )
        if config.hostname is not None and not HOSTNAME.fullmatch(config.hostname):
            return ConfigRefusal(
                "The hostname is a plain DNS name (contoso.sharepoint.com), lowercase, "
                "without a scheme, port or path",
                "hostname",
            )
        if config.site_path:
            if not config.site_path.startswith("/"):
                return ConfigRefusal("A site path starts with / (/sites/handbook)", "site_path")
            reason = _segments_refusal(config.site_path[1:].rstrip("/"), "site path")
            if reason:
                return ConfigRefusal(reason, "site_path")
        if config.drive is not None and not DRIVE_ID.fullmatch(config.drive):
            reason = _segments_refusal(config.drive, "drive name")
            if reason or "/" in config.drive:
                return ConfigRefusal(
                    "A drive is a document library's name or a Graph drive id (b!...)", "drive"
                )
        if config.folder_path.strip("/"):
            reason = _segments_refusal(config.folder_path.strip("/"), "folder path")
            if reason:
                return ConfigRefusal(reason, "folder_path")
        return None
