from __future__ import annotations

from collections.abc import Mapping
from io import BytesIO
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import types
from ..types import File

T = TypeVar("T", bound="UploadBeirEvaluationBody")


@_attrs_define
class UploadBeirEvaluationBody:
    """
    Attributes:
        queries (File):
        qrels (File):
        name (str):
    """

    queries: File
    qrels: File
    name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        queries = self.queries.to_tuple()

        qrels = self.qrels.to_tuple()

        name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "queries": queries,
                "qrels": qrels,
                "name": name,
            }
        )

        return field_dict

    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("queries", self.queries.to_tuple()))

        files.append(("qrels", self.qrels.to_tuple()))

        files.append(("name", (None, str(self.name).encode(), "text/plain")))

        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))

        return files

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        queries = File(payload=BytesIO(d.pop("queries")))

        qrels = File(payload=BytesIO(d.pop("qrels")))

        name = d.pop("name")

        upload_beir_evaluation_body = cls(
            queries=queries,
            qrels=qrels,
            name=name,
        )

        upload_beir_evaluation_body.additional_properties = d
        return upload_beir_evaluation_body

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
