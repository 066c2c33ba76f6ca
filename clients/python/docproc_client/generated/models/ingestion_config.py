from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.chunking_strategy import ChunkingStrategy
from ..models.ingestion_config_liteparse_output_format import (
    IngestionConfigLiteparseOutputFormat,
)
from ..models.ingestion_config_parser import IngestionConfigParser
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.vision_profile import VisionProfile


T = TypeVar("T", bound="IngestionConfig")


@_attrs_define
class IngestionConfig:
    """
    Attributes:
        parser (IngestionConfigParser | Unset):  Default: IngestionConfigParser.PYMUPDF.
        chunk_size (int | Unset):  Default: 2500.
        chunk_overlap (int | Unset):  Default: 200.
        chunking_strategy (ChunkingStrategy | Unset):
        liteparse_output_format (IngestionConfigLiteparseOutputFormat | Unset):  Default:
            IngestionConfigLiteparseOutputFormat.MARKDOWN.
        auto_ocr (bool | Unset):  Default: True.
        ocr_language (str | Unset):  Default: 'eng'.
        liteparse_dpi (int | Unset):  Default: 150.
        max_pages (int | Unset):  Default: 1000.
        parse_timeout_seconds (int | Unset):  Default: 300.
        llamaparse_secret_id (None | Unset | UUID):
        image_description (bool | Unset):  Default: False.
        vision_profile_id (None | Unset | UUID):
        vision_profile (None | Unset | VisionProfile):
    """

    parser: IngestionConfigParser | Unset = IngestionConfigParser.PYMUPDF
    chunk_size: int | Unset = 2500
    chunk_overlap: int | Unset = 200
    chunking_strategy: ChunkingStrategy | Unset = UNSET
    liteparse_output_format: IngestionConfigLiteparseOutputFormat | Unset = (
        IngestionConfigLiteparseOutputFormat.MARKDOWN
    )
    auto_ocr: bool | Unset = True
    ocr_language: str | Unset = "eng"
    liteparse_dpi: int | Unset = 150
    max_pages: int | Unset = 1000
    parse_timeout_seconds: int | Unset = 300
    llamaparse_secret_id: None | Unset | UUID = UNSET
    image_description: bool | Unset = False
    vision_profile_id: None | Unset | UUID = UNSET
    vision_profile: None | Unset | VisionProfile = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.vision_profile import VisionProfile

        parser: str | Unset = UNSET
        if not isinstance(self.parser, Unset):
            parser = self.parser.value

        chunk_size = self.chunk_size

        chunk_overlap = self.chunk_overlap

        chunking_strategy: str | Unset = UNSET
        if not isinstance(self.chunking_strategy, Unset):
            chunking_strategy = self.chunking_strategy.value

        liteparse_output_format: str | Unset = UNSET
        if not isinstance(self.liteparse_output_format, Unset):
            liteparse_output_format = self.liteparse_output_format.value

        auto_ocr = self.auto_ocr

        ocr_language = self.ocr_language

        liteparse_dpi = self.liteparse_dpi

        max_pages = self.max_pages

        parse_timeout_seconds = self.parse_timeout_seconds

        llamaparse_secret_id: None | str | Unset
        if isinstance(self.llamaparse_secret_id, Unset):
            llamaparse_secret_id = UNSET
        elif isinstance(self.llamaparse_secret_id, UUID):
            llamaparse_secret_id = str(self.llamaparse_secret_id)
        else:
            llamaparse_secret_id = self.llamaparse_secret_id

        image_description = self.image_description

        vision_profile_id: None | str | Unset
        if isinstance(self.vision_profile_id, Unset):
            vision_profile_id = UNSET
        elif isinstance(self.vision_profile_id, UUID):
            vision_profile_id = str(self.vision_profile_id)
        else:
            vision_profile_id = self.vision_profile_id

        vision_profile: dict[str, Any] | None | Unset
        if isinstance(self.vision_profile, Unset):
            vision_profile = UNSET
        elif isinstance(self.vision_profile, VisionProfile):
            vision_profile = self.vision_profile.to_dict()
        else:
            vision_profile = self.vision_profile

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if parser is not UNSET:
            field_dict["parser"] = parser
        if chunk_size is not UNSET:
            field_dict["chunk_size"] = chunk_size
        if chunk_overlap is not UNSET:
            field_dict["chunk_overlap"] = chunk_overlap
        if chunking_strategy is not UNSET:
            field_dict["chunking_strategy"] = chunking_strategy
        if liteparse_output_format is not UNSET:
            field_dict["liteparse_output_format"] = liteparse_output_format
        if auto_ocr is not UNSET:
            field_dict["auto_ocr"] = auto_ocr
        if ocr_language is not UNSET:
            field_dict["ocr_language"] = ocr_language
        if liteparse_dpi is not UNSET:
            field_dict["liteparse_dpi"] = liteparse_dpi
        if max_pages is not UNSET:
            field_dict["max_pages"] = max_pages
        if parse_timeout_seconds is not UNSET:
            field_dict["parse_timeout_seconds"] = parse_timeout_seconds
        if llamaparse_secret_id is not UNSET:
            field_dict["llamaparse_secret_id"] = llamaparse_secret_id
        if image_description is not UNSET:
            field_dict["image_description"] = image_description
        if vision_profile_id is not UNSET:
            field_dict["vision_profile_id"] = vision_profile_id
        if vision_profile is not UNSET:
            field_dict["vision_profile"] = vision_profile

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.vision_profile import VisionProfile

        d = dict(src_dict)
        _parser = d.pop("parser", UNSET)
        parser: IngestionConfigParser | Unset
        if isinstance(_parser, Unset):
            parser = UNSET
        else:
            parser = IngestionConfigParser(_parser)

        chunk_size = d.pop("chunk_size", UNSET)

        chunk_overlap = d.pop("chunk_overlap", UNSET)

        _chunking_strategy = d.pop("chunking_strategy", UNSET)
        chunking_strategy: ChunkingStrategy | Unset
        if isinstance(_chunking_strategy, Unset):
            chunking_strategy = UNSET
        else:
            chunking_strategy = ChunkingStrategy(_chunking_strategy)

        _liteparse_output_format = d.pop("liteparse_output_format", UNSET)
        liteparse_output_format: IngestionConfigLiteparseOutputFormat | Unset
        if isinstance(_liteparse_output_format, Unset):
            liteparse_output_format = UNSET
        else:
            liteparse_output_format = IngestionConfigLiteparseOutputFormat(
                _liteparse_output_format
            )

        auto_ocr = d.pop("auto_ocr", UNSET)

        ocr_language = d.pop("ocr_language", UNSET)

        liteparse_dpi = d.pop("liteparse_dpi", UNSET)

        max_pages = d.pop("max_pages", UNSET)

        parse_timeout_seconds = d.pop("parse_timeout_seconds", UNSET)

        def _parse_llamaparse_secret_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                llamaparse_secret_id_type_0 = UUID(data)

                return llamaparse_secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        llamaparse_secret_id = _parse_llamaparse_secret_id(
            d.pop("llamaparse_secret_id", UNSET)
        )

        image_description = d.pop("image_description", UNSET)

        def _parse_vision_profile_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                vision_profile_id_type_0 = UUID(data)

                return vision_profile_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        vision_profile_id = _parse_vision_profile_id(d.pop("vision_profile_id", UNSET))

        def _parse_vision_profile(data: object) -> None | Unset | VisionProfile:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                vision_profile_type_0 = VisionProfile.from_dict(data)

                return vision_profile_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VisionProfile, data)

        vision_profile = _parse_vision_profile(d.pop("vision_profile", UNSET))

        ingestion_config = cls(
            parser=parser,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            chunking_strategy=chunking_strategy,
            liteparse_output_format=liteparse_output_format,
            auto_ocr=auto_ocr,
            ocr_language=ocr_language,
            liteparse_dpi=liteparse_dpi,
            max_pages=max_pages,
            parse_timeout_seconds=parse_timeout_seconds,
            llamaparse_secret_id=llamaparse_secret_id,
            image_description=image_description,
            vision_profile_id=vision_profile_id,
            vision_profile=vision_profile,
        )

        return ingestion_config
