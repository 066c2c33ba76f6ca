from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.embedding_endpoint_create_scope import EmbeddingEndpointCreateScope
from ..types import UNSET, Unset

T = TypeVar("T", bound="EmbeddingEndpointCreate")


@_attrs_define
class EmbeddingEndpointCreate:
    """
    Attributes:
        name (str):
        base_url (str):
        scope (EmbeddingEndpointCreateScope | Unset):  Default: EmbeddingEndpointCreateScope.ORG.
    """

    name: str
    base_url: str
    scope: EmbeddingEndpointCreateScope | Unset = EmbeddingEndpointCreateScope.ORG

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        base_url = self.base_url

        scope: str | Unset = UNSET
        if not isinstance(self.scope, Unset):
            scope = self.scope.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "base_url": base_url,
            }
        )
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        base_url = d.pop("base_url")

        _scope = d.pop("scope", UNSET)
        scope: EmbeddingEndpointCreateScope | Unset
        if isinstance(_scope, Unset):
            scope = UNSET
        else:
            scope = EmbeddingEndpointCreateScope(_scope)

        embedding_endpoint_create = cls(
            name=name,
            base_url=base_url,
            scope=scope,
        )

        return embedding_endpoint_create
