"""Which addresses a collection may send its embedding requests (and its key) to."""

from __future__ import annotations

import pytest
from docproc_common.embedding.catalog import provider_spec
from docproc_common.errors import InvalidInput
from docproc_upload.embeddings.base_urls import check_base_url, normalize_url


class TestBaseUrls:
    @pytest.mark.parametrize(
        "url",
        ["https://openrouter.ai/api/v1", "https://eu.openrouter.ai/api/v1/"],
    )
    def test_provider_hosts(self, url: str) -> None:
        assert check_base_url(url, provider_spec("openrouter"), []) == url.rstrip("/")

    @pytest.mark.parametrize(
        "url",
        [
            "http://openrouter.ai/api/v1",  # not https
            "https://openrouter.ai.evil.example/v1",
            "https://evilopenrouter.ai/v1",
            "https://openrouter.ai@evil.example/v1",
            "https://openrouter.ai/v1?x=1",
            "ftp://openrouter.ai/v1",
            "https://api.openai.com/v1",  # another provider's host
        ],
    )
    def test_refused(self, url: str) -> None:
        with pytest.raises(InvalidInput) as info:
            check_base_url(url, provider_spec("openrouter"), [])
        assert info.value.fields[0].field == "embedding_base_url"

    def test_allowlist(self) -> None:
        openai = provider_spec("openai")
        allowed = ["http://127.0.0.1", "https://gw.example/openai"]
        assert check_base_url("http://127.0.0.1:8123/v1", openai, allowed)
        assert check_base_url("https://gw.example/openai/v1", openai, allowed)
        for url in [
            "http://127.0.0.2:80/v1",
            "https://gw.example/openaiX/v1",
            "http://127.0.0.1:80@evil/v1",
        ]:
            with pytest.raises(InvalidInput):
                check_base_url(url, openai, allowed)

    def test_keyless_providers_take_no_base_url(self) -> None:
        with pytest.raises(InvalidInput, match="takes no base URL"):
            check_base_url("http://127.0.0.1/v1", provider_spec("ollama"), ["http://127.0.0.1"])

    def test_normalize(self) -> None:
        assert normalize_url(" http://h:1/v1/ ", field="f") == "http://h:1/v1"
        with pytest.raises(InvalidInput):
            normalize_url("http://h:99999/v1", field="f")
