from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.agent_in import AgentIn


T = TypeVar("T", bound="RenderRequest")


@_attrs_define
class RenderRequest:
    """
    Attributes:
        file_ids (list[UUID]):
        agent (AgentIn): The agent a turn runs, as the chat runner knows it after ``prepare``.

            ``runtime_reads`` lists the file types its workspace runtime opens by itself;
            without it, ``described_runtime_has_lit`` says whether the deployment described the
            runtime to the model as having ``lit`` (PDF, office and OpenDocument formats).
    """

    file_ids: list[UUID]
    agent: AgentIn

    def to_dict(self) -> dict[str, Any]:
        file_ids = []
        for file_ids_item_data in self.file_ids:
            file_ids_item = str(file_ids_item_data)
            file_ids.append(file_ids_item)

        agent = self.agent.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "file_ids": file_ids,
                "agent": agent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent_in import AgentIn

        d = dict(src_dict)
        file_ids = []
        _file_ids = d.pop("file_ids")
        for file_ids_item_data in _file_ids:
            file_ids_item = UUID(file_ids_item_data)

            file_ids.append(file_ids_item)

        agent = AgentIn.from_dict(d.pop("agent"))

        render_request = cls(
            file_ids=file_ids,
            agent=agent,
        )

        return render_request
