"""How the keyword leg reads a query's minus signs (``search.repository.web_search_text``)."""

from __future__ import annotations

import pytest
from docproc_upload.search.repository import web_search_text


@pytest.mark.parametrize(
    "query",
    [
        "older adults -statins",
        'x -"a phrase"',
        "-dementia",
        "x\t-y",
        "IL-6 levels",
        "x-ray",
        "5-10",
    ],
)
def test_a_typed_operator_and_a_hyphen_in_a_word_stay(query: str) -> None:
    assert web_search_text(query) == query


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("(CD)-associated dysbiosis", "(CD) associated dysbiosis"),
        ("cells - a study", "cells   a study"),
        ("at -5 degrees", "at  5 degrees"),
        ("(-)-epicatechin", "( ) epicatechin"),
        ("a -- b", "a    b"),
        ("ends with -", "ends with  "),
        ("x -'quoted'", "x  'quoted'"),
    ],
)
def test_a_minus_no_one_typed_as_an_operator_reads_as_a_space(query: str, read: str) -> None:
    assert web_search_text(query) == read


def test_inside_quotes_nothing_changes() -> None:
    assert web_search_text('"cells - a study" -(x)') == '"cells - a study"  (x)'
