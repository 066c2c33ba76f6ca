"""The parser's own section (``PARSER__*``) is checked for misspelt names like the shared
ones: a typo is a refusal naming it, not a limit silently left at its default."""

import pytest
from docproc_common.settings import Settings
from docproc_parser.settings import ParserSettings
from pydantic_settings import SettingsError


def test_a_misspelt_parser_setting_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARSER__MEMORY_LIMIT", "512")
    with pytest.raises(
        SettingsError, match="PARSER__MEMORY_LIMIT .*did you mean PARSER__MEMORY_LIMIT_MB"
    ):
        Settings()


def test_the_parser_settings_it_reads_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARSER__MEMORY_LIMIT_MB", "512")
    Settings()
    assert ParserSettings().memory_limit_mb == 512
