import pytest
from docproc_common.db.vector_tables import (
    is_vector_table,
    validate_collection_name,
    vector_table_name,
)
from docproc_common.errors import InvalidInput


class TestValidateCollectionName:
    @pytest.mark.parametrize("name", ["handbook", "documents_archive", "a", "x_1", "a_", "a" * 45])
    def test_accepts(self, name: str) -> None:
        assert validate_collection_name(name) == name

    @pytest.mark.parametrize(
        ("name", "rule"),
        [
            ("foo-bar", "bare identifier"),
            ("2024_reports", "bare identifier"),
            ("with space", "bare identifier"),
            ("quo'te", "bare identifier"),
            ("ñandú", "bare identifier"),
            ("", "bare identifier"),
            ("Handbook", "uppercase"),
            ("a" * 46, "at most 45"),
            ("_x1", "underscore"),
            ("_", "underscore"),
            ("all", "reserved"),
            ("documents", "docproc itself owns"),
        ],
    )
    def test_refuses_with_the_rule(self, name: str, rule: str) -> None:
        with pytest.raises(InvalidInput) as info:
            validate_collection_name(name)
        assert rule in info.value.message
        assert info.value.fields[0].field == "collection_name"

    def test_never_lowercases(self) -> None:
        with pytest.raises(InvalidInput):
            vector_table_name("Handbook")

    def test_longest_identifier_fits_postgres(self) -> None:
        assert len(f"rag_{'a' * 45}_embedding_idx".encode()) <= 63


class TestIsVectorTable:
    def test_model_table_is_not_a_collection(self) -> None:
        assert not is_vector_table("rag_documents")

    def test_runtime_table_is(self) -> None:
        assert is_vector_table("rag_documents_archive")
        assert not is_vector_table("knowledge_bases")
