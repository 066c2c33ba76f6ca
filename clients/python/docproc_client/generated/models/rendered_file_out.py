from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.file_type import FileType
from ..models.rendered_file_out_file_type import RenderedFileOutFileType

if TYPE_CHECKING:
    from ..models.workspace_fetch_out import WorkspaceFetchOut


T = TypeVar("T", bound="RenderedFileOut")


@_attrs_define
class RenderedFileOut:
    """
    Attributes:
        file_kind (FileType):
        file_id (UUID):
        filename (str):
        mode (str):
        workspace_path (None | str):
        sibling_path (None | str):
        fetch (None | WorkspaceFetchOut): How the runner fetches what was written into the workspace; null when nothing
            was (inline, not opened, not written, skipped) and on a dry run
        file_type (RenderedFileOutFileType): The specification's classified type, one of eight
    """

    file_kind: FileType
    file_id: UUID
    filename: str
    mode: str
    workspace_path: None | str
    sibling_path: None | str
    fetch: None | WorkspaceFetchOut
    file_type: RenderedFileOutFileType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.workspace_fetch_out import WorkspaceFetchOut

        file_kind = self.file_kind.value

        file_id = str(self.file_id)

        filename = self.filename

        mode = self.mode

        workspace_path: None | str
        workspace_path = self.workspace_path

        sibling_path: None | str
        sibling_path = self.sibling_path

        fetch: dict[str, Any] | None
        if isinstance(self.fetch, WorkspaceFetchOut):
            fetch = self.fetch.to_dict()
        else:
            fetch = self.fetch

        file_type = self.file_type.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "file_kind": file_kind,
                "file_id": file_id,
                "filename": filename,
                "mode": mode,
                "workspace_path": workspace_path,
                "sibling_path": sibling_path,
                "fetch": fetch,
                "file_type": file_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workspace_fetch_out import WorkspaceFetchOut

        d = dict(src_dict)
        file_kind = FileType(d.pop("file_kind"))

        file_id = UUID(d.pop("file_id"))

        filename = d.pop("filename")

        mode = d.pop("mode")

        def _parse_workspace_path(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        workspace_path = _parse_workspace_path(d.pop("workspace_path"))

        def _parse_sibling_path(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        sibling_path = _parse_sibling_path(d.pop("sibling_path"))

        def _parse_fetch(data: object) -> None | WorkspaceFetchOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                fetch_type_0 = WorkspaceFetchOut.from_dict(data)

                return fetch_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | WorkspaceFetchOut, data)

        fetch = _parse_fetch(d.pop("fetch"))

        file_type = RenderedFileOutFileType(d.pop("file_type"))

        rendered_file_out = cls(
            file_kind=file_kind,
            file_id=file_id,
            filename=filename,
            mode=mode,
            workspace_path=workspace_path,
            sibling_path=sibling_path,
            fetch=fetch,
            file_type=file_type,
        )

        rendered_file_out.additional_properties = d
        return rendered_file_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
