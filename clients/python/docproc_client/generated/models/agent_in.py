from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.file_type import FileType
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentIn")


@_attrs_define
class AgentIn:
    """The agent a turn runs, as the chat runner knows it after ``prepare``.

    ``runtime_reads`` lists the file types its workspace runtime opens by itself;
    without it, ``described_runtime_has_lit`` says whether the deployment described the
    runtime to the model as having ``lit`` (PDF, office and OpenDocument formats).

        Attributes:
            has_workspace (bool | Unset):  Default: False.
            agent_id (str | Unset):  Default: ''.
            conversation_id (str | Unset):  Default: ''.
            runtime_reads (list[FileType] | None | Unset):
            described_runtime_has_lit (bool | Unset):  Default: False.
    """

    has_workspace: bool | Unset = False
    agent_id: str | Unset = ""
    conversation_id: str | Unset = ""
    runtime_reads: list[FileType] | None | Unset = UNSET
    described_runtime_has_lit: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        has_workspace = self.has_workspace

        agent_id = self.agent_id

        conversation_id = self.conversation_id

        runtime_reads: list[str] | None | Unset
        if isinstance(self.runtime_reads, Unset):
            runtime_reads = UNSET
        elif isinstance(self.runtime_reads, list):
            runtime_reads = []
            for runtime_reads_type_0_item_data in self.runtime_reads:
                runtime_reads_type_0_item = runtime_reads_type_0_item_data.value
                runtime_reads.append(runtime_reads_type_0_item)

        else:
            runtime_reads = self.runtime_reads

        described_runtime_has_lit = self.described_runtime_has_lit

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if has_workspace is not UNSET:
            field_dict["has_workspace"] = has_workspace
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if conversation_id is not UNSET:
            field_dict["conversation_id"] = conversation_id
        if runtime_reads is not UNSET:
            field_dict["runtime_reads"] = runtime_reads
        if described_runtime_has_lit is not UNSET:
            field_dict["described_runtime_has_lit"] = described_runtime_has_lit

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        has_workspace = d.pop("has_workspace", UNSET)

        agent_id = d.pop("agent_id", UNSET)

        conversation_id = d.pop("conversation_id", UNSET)

        def _parse_runtime_reads(data: object) -> list[FileType] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                runtime_reads_type_0 = []
                _runtime_reads_type_0 = data
                for runtime_reads_type_0_item_data in _runtime_reads_type_0:
                    runtime_reads_type_0_item = FileType(runtime_reads_type_0_item_data)

                    runtime_reads_type_0.append(runtime_reads_type_0_item)

                return runtime_reads_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FileType] | None | Unset, data)

        runtime_reads = _parse_runtime_reads(d.pop("runtime_reads", UNSET))

        described_runtime_has_lit = d.pop("described_runtime_has_lit", UNSET)

        agent_in = cls(
            has_workspace=has_workspace,
            agent_id=agent_id,
            conversation_id=conversation_id,
            runtime_reads=runtime_reads,
            described_runtime_has_lit=described_runtime_has_lit,
        )

        return agent_in
