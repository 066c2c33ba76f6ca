from docproc_common.errors import CollectionNotFound, FieldError, InvalidInput


class TestEnvelope:
    def test_fields_go_under_details(self) -> None:
        err = InvalidInput("bad", fields=[FieldError("ingestion_config.chunk_size", "too big")])
        assert err.envelope() == {
            "error": {
                "code": "INVALID_INPUT",
                "message": "bad",
                "details": {
                    "fields": [{"field": "ingestion_config.chunk_size", "message": "too big"}]
                },
            }
        }
        assert err.status_code == 400

    def test_collection_not_found_is_one_shape(self) -> None:
        assert CollectionNotFound().envelope() == {
            "error": {"code": "NOT_FOUND", "message": "Collection not found", "details": {}}
        }
