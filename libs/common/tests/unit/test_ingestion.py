import pytest
from docproc_common.errors import InvalidInput
from docproc_common.ingestion import merge_config


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
