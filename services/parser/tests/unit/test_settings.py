"""The parser's own section of the settings (``PARSER__*``, ``Settings.parser``) is read and
checked for misspelt names like the shared ones: a typo is a refusal naming it, not a limit
silently left at its default."""

import pytest
from docproc_common.settings import Settings
from pydantic_settings import SettingsError


def test_a_misspelt_parser_setting_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARSER__MEMORY_LIMIT", "512")
    with pytest.raises(
        SettingsError, match="PARSER__MEMORY_LIMIT .*did you mean PARSER__MEMORY_LIMIT_MB"
    ):
        Settings()


def test_the_parser_settings_it_reads_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARSER__MEMORY_LIMIT_MB", "512")
    monkeypatch.setenv("PARSER__VISION_ALLOWED_BASE_URLS", '["http://vision.internal/v1"]')
    parser = Settings().parser
    assert parser.memory_limit_mb == 512
    assert parser.vision_allowed_base_urls == ["http://vision.internal/v1"]
