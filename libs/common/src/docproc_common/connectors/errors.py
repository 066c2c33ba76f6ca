"""What a connector raises. Messages are written here and safe to show in a sync log."""

from __future__ import annotations

from typing import Literal, TypeAlias

from docproc_common.failures import Stage, summary

#: What a failed client call could not sync: the whole source (its listing) or one document.
Subject: TypeAlias = Literal["source", "document"]


class ConnectorError(Exception):
    """The source could not be listed or a file could not be fetched; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RemoteNameRefusedError(ConnectorError):
    """A remote name that is no file name, or that would land outside the sync directory."""


class NetworkRefusedError(ConnectorError):
    """An address this deployment does not let a tenant's address reach (loopback, private,
    link-local): ``docproc_common.egress``."""


class ClientFailedError(ConnectorError):
    """The source's own client failed (botocore, git). Its text can name an endpoint, a bucket,
    a URL with a token in its query string, so it is never the message: that is the stage,
    ``kind`` (the exception's class, an S3 error code, git's exit) and the advice, as a failed
    document's (``failures.summary``). Raise it ``from`` the client's exception: the sync
    service logs the chain."""

    def __init__(self, kind: str, *, subject: Subject) -> None:
        super().__init__(summary(Stage.SYNC, kind, subject=subject))
        self.kind = kind
