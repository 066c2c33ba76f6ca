"""A client's ingestion configuration validated whole (``docproc_upload.ingestion_config``): the
merged pair, the fields named by their path, the same fields in a 422 body as in an upload's 400."""

import uuid

import pytest
from docproc_common.errors import InvalidInput
from docproc_common.http import create_app
from docproc_common.ingestion import IngestionConfig, VisionProfile
from docproc_upload.ingestion_config import merge_config
from fastapi import APIRouter
from fastapi.testclient import TestClient
from pydantic import BaseModel


class TestSecretBindings:
    """What a configuration lends: the binding the API checks where it is made and the parser
    holds its key to (a vision key is bound to its endpoint too)."""

    def test_each_key_its_field_its_kind_and_where_it_goes(self) -> None:
        llama, key = uuid.uuid4(), uuid.uuid4()
        profile = {"base_url": "https://vl.example/v1", "model": "m", "secret_id": str(key)}
        config = merge_config(
            {},
            {"parser": "llamaparse", "llamaparse_secret_id": str(llama), "vision_profile": profile},
        )
        assert {
            (b.field, b.secret_id, b.kind, b.destination) for b in config.secret_bindings()
        } == {
            ("llamaparse_secret_id", llama, "llamaparse", None),
            ("vision_profile.secret_id", key, "api_key", "https://vl.example/v1"),
        }
        elsewhere = merge_config(
            config.model_dump(mode="json"),
            {"vision_profile": {**profile, "base_url": "https://other.example/v1"}},
        )
        assert elsewhere.secret_bindings() - config.secret_bindings() != frozenset()
        assert merge_config({}, None).secret_bindings() == frozenset()


class TestMergeConfig:
    def test_defaults(self) -> None:
        config = merge_config({}, None)
        assert (config.chunk_size, config.chunk_overlap, config.chunking_strategy) == (
            2500,
            200,
            "recursive",
        )

    def test_pair_rule_is_checked_on_the_merge_and_names_the_object(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({"chunk_size": 2500}, {"chunk_overlap": 4096})
        assert [f.field for f in info.value.fields] == ["ingestion_config"]

    def test_single_field_is_named(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"chunk_size": 0})
        assert [f.field for f in info.value.fields] == ["ingestion_config.chunk_size"]

    def test_unknown_keys_are_refused(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"chunk_sise": 10})
        assert info.value.fields[0].field == "ingestion_config.chunk_sise"


class TestParserOptions:
    def test_defaults_are_the_seeds(self) -> None:
        config = IngestionConfig()
        assert config.parser == "pymupdf"
        assert (config.liteparse_output_format, config.auto_ocr, config.ocr_language) == (
            "markdown",
            True,
            "eng",
        )
        assert (config.liteparse_dpi, config.max_pages) == (150, 1000)
        assert config.image_description is False
        assert config.vision_profile is None
        assert config.llamaparse_secret_id is None

    def test_llamaparse_needs_the_collections_vault_key(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"parser": "llamaparse"})
        assert [f.field for f in info.value.fields] == ["ingestion_config"]
        assert "llamaparse_secret_id" in info.value.fields[0].message
        ok = merge_config({"parser": "llamaparse", "llamaparse_secret_id": str(uuid.uuid4())}, None)
        assert ok.parser == "llamaparse"

    def test_image_description_needs_a_vision_profile(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"image_description": True})
        assert [f.field for f in info.value.fields] == ["ingestion_config"]
        profile = {"base_url": "https://api.openai.com/v1/", "model": "gpt-4o-mini"}
        config = merge_config({"vision_profile": profile}, {"image_description": True})
        assert config.vision_profile is not None
        assert config.vision_profile.base_url == "https://api.openai.com/v1"

    @pytest.mark.parametrize("field", ["base_url", "model"])
    def test_a_vision_profile_text_with_a_nul_is_refused(self, field: str) -> None:
        profile = {"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini"}
        profile[field] += "\x00"
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"vision_profile": profile})
        (refusal,) = info.value.fields
        assert refusal.field == f"ingestion_config.vision_profile.{field}"
        assert "NUL" in refusal.message

    @pytest.mark.parametrize("language", ["eng", "eng+pol", "chi_sim+eng"])
    def test_ocr_language_takes_tesseract_codes(self, language: str) -> None:
        assert merge_config({}, {"ocr_language": language}).ocr_language == language

    @pytest.mark.parametrize("language", ["english", "en", "eng+", "eng pol", "ENG"])
    def test_ocr_language_refuses_anything_else(self, language: str) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, {"ocr_language": language})
        assert [f.field for f in info.value.fields] == ["ingestion_config.ocr_language"]

    @pytest.mark.parametrize(
        ("override", "field"),
        [
            ({"liteparse_output_format": "json"}, "ingestion_config.liteparse_output_format"),
            ({"liteparse_dpi": 10}, "ingestion_config.liteparse_dpi"),
            ({"max_pages": 0}, "ingestion_config.max_pages"),
            ({"parse_timeout_seconds": 1}, "ingestion_config.parse_timeout_seconds"),
            ({"parser": "tika"}, "ingestion_config.parser"),
            (
                {"vision_profile": {"base_url": "ftp://host", "model": "m"}},
                "ingestion_config.vision_profile.base_url",
            ),
            (
                {"vision_profile": {"base_url": "https://u:p@host/v1", "model": "m"}},
                "ingestion_config.vision_profile.base_url",
            ),
            (
                {"vision_profile": {"base_url": "https://host", "model": "m", "api_key": "k"}},
                "ingestion_config.vision_profile.api_key",
            ),
        ],
    )
    def test_single_fields_are_named_by_their_path(
        self, override: dict[str, object], field: str
    ) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config({}, override)
        assert [f.field for f in info.value.fields] == [field]

    def test_the_override_changes_only_what_it_carries(self) -> None:
        base = merge_config({}, {"parser": "liteparse", "ocr_language": "eng+pol"})
        merged = merge_config(base.model_dump(mode="json"), {"liteparse_dpi": 300})
        assert (merged.parser, merged.ocr_language, merged.liteparse_dpi) == (
            "liteparse",
            "eng+pol",
            300,
        )


class Body(BaseModel):
    name: str
    ingestion_config: IngestionConfig = IngestionConfig()


@pytest.fixture(scope="module")
def client() -> TestClient:
    router = APIRouter()

    @router.post("/kb")
    async def create(body: Body) -> dict[str, str]:
        return {"name": body.name}

    return TestClient(create_app(title="test", routers=[router]))


class TestCollectionBody422:
    """The same pair sent as a collection's own config is a 422 naming the same fields."""

    @pytest.mark.parametrize(
        ("config", "field"),
        [
            ({"chunk_size": 2500, "chunk_overlap": 4096}, "ingestion_config"),
            ({"chunk_size": 0}, "ingestion_config.chunk_size"),
            ({"chunk_sise": 10}, "ingestion_config.chunk_sise"),
            ({"parser": "llamaparse"}, "ingestion_config"),
        ],
    )
    def test_same_fields_as_the_upload_400(
        self, client: TestClient, config: dict[str, object], field: str
    ) -> None:
        response = client.post("/kb", json={"name": "kb", "ingestion_config": config})
        assert response.status_code == 422
        fields = [f["field"] for f in response.json()["error"]["details"]["fields"]]
        assert fields == [field]
        with pytest.raises(InvalidInput) as info:
            merge_config({}, config)
        assert [f.field for f in info.value.fields] == fields


class TestVisionChoice:
    """Image description names a vision model profile (``vision_profile_id``) or an inline
    ``vision_profile``: one choice in two forms, never both."""

    PROFILE = {"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini"}

    def test_a_profile_id_is_enough_to_describe_images(self) -> None:
        chosen = uuid.uuid4()
        config = merge_config({"vision_profile_id": str(chosen)}, {"image_description": True})
        assert (config.vision_profile_id, config.vision_profile) == (chosen, None)
        # selecting a profile binds nothing by itself: the profile's key is checked as the
        # selection's (``vision_profiles.service.check_selection``)
        assert config.secret_bindings() == frozenset()

    def test_both_forms_at_once_are_refused(self) -> None:
        with pytest.raises(InvalidInput) as info:
            merge_config(
                {}, {"vision_profile_id": str(uuid.uuid4()), "vision_profile": self.PROFILE}
            )
        assert [f.field for f in info.value.fields] == ["ingestion_config"]
        assert "not both" in info.value.fields[0].message

    def test_an_override_of_one_form_replaces_the_other(self) -> None:
        chosen = uuid.uuid4()
        inline = merge_config(
            {"vision_profile_id": str(chosen), "image_description": True},
            {"vision_profile": self.PROFILE},
        )
        assert inline.vision_profile_id is None and inline.vision_profile is not None
        picked = merge_config(
            {"vision_profile": self.PROFILE, "image_description": True},
            {"vision_profile_id": str(chosen)},
        )
        assert (picked.vision_profile_id, picked.vision_profile) == (chosen, None)

    def test_resolving_the_selection_puts_the_profile_in_place(self) -> None:
        config = merge_config({"vision_profile_id": str(uuid.uuid4())}, None)
        resolved = config.with_vision(VisionProfile(**self.PROFILE))
        assert resolved.vision_profile_id is None
        assert resolved.vision_profile == VisionProfile(**self.PROFILE)
