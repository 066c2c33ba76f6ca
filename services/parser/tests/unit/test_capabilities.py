"""What the parser reads is declared once (``FORMATS__*``) and checked here, by the parser:
the upload API and sync refuse by the declaration, so the parser is not ready while its
own machine disagrees with it (docs/decisions/0006-parser-capabilities.md)."""

from __future__ import annotations

import pytest
from docproc_common.formats import Capabilities
from docproc_common.settings import FormatSettings, Settings
from docproc_parser.app import CapabilitiesDisagree, capabilities_check

EVERYTHING = Capabilities(liteparse=True)
WRITER_ONLY = Capabilities(liteparse=True, office=frozenset({"writer"}))


class TestDeclared:
    def test_a_declared_value_is_taken_as_declared(self) -> None:
        declared = Capabilities.declared(FormatSettings(liteparse=False, office=frozenset()))
        assert declared == Capabilities(liteparse=False, office=frozenset())

    def test_an_undeclared_part_is_probed_here(self) -> None:
        probed = Capabilities.detect()
        assert Capabilities.declared(FormatSettings()) == probed
        assert Capabilities.declared(FormatSettings(liteparse=False)).office == probed.office

    def test_the_chart_s_environment_reads(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("FORMATS__LITEPARSE", "true")
        monkeypatch.setenv("FORMATS__OFFICE", '["writer", "calc"]')
        assert Settings().formats == FormatSettings(
            liteparse=True, office=frozenset({"writer", "calc"})
        )


class TestReadiness:
    async def test_ready_when_the_machine_has_what_was_declared(self) -> None:
        await capabilities_check(EVERYTHING, EVERYTHING)()

    async def test_not_ready_when_it_has_less(self) -> None:
        check = capabilities_check(EVERYTHING, WRITER_ONLY)
        with pytest.raises(CapabilitiesDisagree, match="calc"):
            await check()

    async def test_not_ready_when_it_has_more(self) -> None:
        check = capabilities_check(Capabilities(liteparse=False), EVERYTHING)
        with pytest.raises(CapabilitiesDisagree, match="liteparse declared False"):
            await check()
