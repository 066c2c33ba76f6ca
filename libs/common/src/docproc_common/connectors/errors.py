"""What a connector raises. Messages are written here and safe to show in a sync log."""

from __future__ import annotations


class ConnectorError(Exception):
    """The source could not be listed or a file could not be fetched; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RemoteNameRefusedError(ConnectorError):
    """A remote name that is no file name, or that would land outside the sync directory."""


class NetworkRefusedError(ConnectorError):
    """An address this deployment does not let a source reach (loopback, private, link-local)."""
