"""The pure parts of evaluation sets: the measures (trec_eval's, graded judgments with linear
gain), documents ranked by their best chunk, BEIR's files read and refused, a set's
limits, the gauge's figure per base and mode."""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from docproc_common.db.models import EvaluationRun
from docproc_common.errors import InvalidInput
from docproc_common.settings import Settings
from docproc_upload.evaluations.schedule import scheduled_runs
from docproc_upload.evaluations.schemas import MAX_QUERIES, EvaluationCreate
from docproc_upload.evaluations.service import (
    gauge_values,
    measure,
    parse_beir,
    ranked_documents,
    stem,
)
from docproc_upload.search.schemas import QUERY_CHARS, SearchHit, SearchRequest
from pydantic import ValidationError
from pydantic_settings import SettingsError


def hit(document: uuid.UUID | None, score: float) -> SearchHit:
    return SearchHit(
        collection_name="c",
        document_id=document,
        vector_document_id=uuid.uuid4(),
        chunk_no=0,
        filename=None,
        content="",
        score=score,
        metadata={},
        page_start=None,
        page_end=None,
        char_start=None,
        char_end=None,
        crosses_pages=None,
        heading_path=None,
        links=None,
    )


class TestMeasure:
    def test_a_perfect_ranking_scores_one(self) -> None:
        scores = measure({"q": {"a": 1}}, {"q": {"a": 100.0, "b": 99.0}})
        assert scores.model_dump() == {
            "ndcg_at_10": 1.0,
            "recall_at_10": 1.0,
            "recall_at_100": 1.0,
            "mrr_at_10": 1.0,
        }

    def test_graded_judgments_use_linear_gain(self) -> None:
        """d2 (grade 1) above d1 (grade 2): DCG = 1/log2(2) + 2/log2(3) against the ideal
        2/log2(2) + 1/log2(3), as trec_eval computes it (exponential gain would give 0.797)."""
        scores = measure({"q": {"d1": 2, "d2": 1}}, {"q": {"d2": 100.0, "d1": 99.0}})
        expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
        assert scores.ndcg_at_10 == pytest.approx(expected, abs=1e-4)
        assert scores.mrr_at_10 == 1.0

    def test_a_query_with_no_hit_counts_zero(self) -> None:
        qrels = {"found": {"a": 1}, "missed": {"b": 1}}
        scores = measure(qrels, {"found": {"a": 100.0}, "missed": {}})
        assert scores.ndcg_at_10 == 0.5
        assert scores.recall_at_100 == 0.5
        assert measure(qrels, {}).ndcg_at_10 == 0.0

    def test_recall_at_10_and_100_and_mrr(self) -> None:
        ranking = {f"x{i}": float(100 - i) for i in range(20)} | {"a": 79.0}  # "a" is 21st
        scores = measure({"q": {"a": 1, "b": 1}}, {"q": ranking})
        assert (scores.recall_at_10, scores.recall_at_100, scores.mrr_at_10) == (0.0, 0.5, 0.0)


def test_documents_are_ranked_by_their_best_chunk() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    ranking = ranked_documents([hit(a, 0.9), hit(None, 0.8), hit(b, 0.7), hit(a, 0.6)])
    assert list(ranking) == [str(a), str(b)]
    assert ranking[str(a)] > ranking[str(b)]


def test_a_stem_drops_the_last_extension_only() -> None:
    assert (stem("4983.txt"), stem("a.tar.gz"), stem("plain")) == ("4983", "a.tar", "plain")


def beir(
    queries: list[dict[str, Any]], qrels: list[str], header: bool = True
) -> tuple[bytes, bytes]:
    lines = (["query-id\tcorpus-id\tscore"] if header else []) + qrels
    return (
        "\n".join(json.dumps(q) for q in queries).encode(),
        "\n".join(lines).encode(),
    )


def refused(name: str | None, files: tuple[bytes, bytes]) -> InvalidInput:
    with pytest.raises(InvalidInput) as exc:
        parse_beir(name, *files)
    return exc.value


class TestParseBeir:
    def test_the_judged_queries_in_the_qrels_order(self) -> None:
        files = beir(
            [
                {"_id": 1, "text": "first", "metadata": {}},
                {"_id": "2", "text": "second"},
                {"_id": "3", "text": "never judged"},
                {"_id": "4", "text": "judged irrelevant only"},
            ],
            ["2\tdoc-b\t2", "1\tdoc-a\t1", "1\tdoc-c\t0", "4\tdoc-d\t0"],
        )
        body = parse_beir(" SciFact sample ", *files)
        assert body.name == "SciFact sample"
        assert [(q.id, q.text, q.relevant) for q in body.queries] == [
            ("2", "second", {"doc-b": 2}),
            ("1", "first", {"doc-a": 1, "doc-c": 0}),
        ]

    def test_the_header_is_optional(self) -> None:
        files = beir([{"_id": "q", "text": "t"}], ["q\td\t1"], header=False)
        assert parse_beir("n", *files).queries[0].relevant == {"d": 1}

    @pytest.mark.parametrize(
        ("queries", "qrels", "field", "says"),
        [
            (b'{"_id": "q"}\n', b"q\td\t1", "queries", "line 1"),
            (b'{"_id": "q", "text": "t"}\nnot json', b"q\td\t1", "queries", "line 2"),
            (b'{"_id": [1], "text": "t"}', b"q\td\t1", "queries", "line 1"),
            (
                b'{"_id": "q", "text": "t"}\n{"_id": "q", "text": "u"}',
                b"q\td\t1",
                "queries",
                "again",
            ),
            (b"\xff\xfe", b"q\td\t1", "queries", "UTF-8"),
            (b'{"_id": "q", "text": "t"}', b"q\td", "qrels", "line 1"),
            (b'{"_id": "q", "text": "t"}', b"q\td\t1\nq\td\thigh", "qrels", "line 2"),
            (b'{"_id": "q", "text": "t"}', b"q\td\t101", "qrels", "line 1"),
            (b'{"_id": "q", "text": "t"}', b"q\td\t1\nq\td\t2", "qrels", "second judgment"),
            (b'{"_id": "q", "text": "t"}', b"other\td\t1", "qrels", "'other'"),
            (b'{"_id": "q", "text": "t"}', b"q\td\t0", "qrels", "no relevant"),
            (b'{"_id": "q", "text": ""}', b"q\td\t1", "queries", "query 'q'"),
            (b'{"_id": "q", "text": "t\\u0000"}', b"q\td\t1", "queries", "NUL"),
            (b'{"_id": "q", "text": "\\ud800"}', b"q\td\t1", "queries", "surrogate"),
            (b"[" * 100_000, b"q\td\t1", "queries", "line 1"),
        ],
    )
    def test_a_bad_file_is_a_400_naming_it(
        self, queries: bytes, qrels: bytes, field: str, says: str
    ) -> None:
        error = refused("set", (queries, qrels))
        assert [f.field for f in error.fields] == [field]
        assert says in error.fields[0].message + error.message

    @pytest.mark.parametrize("name", [None, "", "   ", "n" * 201])
    def test_a_set_is_named(self, name: str | None) -> None:
        error = refused(name, beir([{"_id": "q", "text": "t"}], ["q\td\t1"]))
        assert [f.field for f in error.fields] == ["name"]

    def test_more_judged_queries_than_a_set_holds_is_refused(self) -> None:
        n = MAX_QUERIES + 1
        files = beir(
            [{"_id": str(i), "text": f"q{i}"} for i in range(n)],
            [f"{i}\td{i}\t1" for i in range(n)],
        )
        error = refused("big", files)
        assert error.fields[0].field == "qrels"
        assert f"{n} judged queries" in error.fields[0].message

    def test_a_query_over_the_search_limit_is_named(self) -> None:
        files = beir([{"_id": "long", "text": "x" * (QUERY_CHARS + 1)}], ["long\td\t1"])
        error = refused("set", files)
        assert error.fields[0].field == "queries"
        assert "query 'long'" in error.fields[0].message


class TestEvaluationCreate:
    def body(self, *queries: dict[str, Any]) -> dict[str, Any]:
        return {"name": "set", "queries": list(queries)}

    def test_query_ids_are_unique(self) -> None:
        q = {"id": "q", "text": "t", "relevant": {"a.txt": 1}}
        with pytest.raises(ValidationError, match="two queries have the id 'q'"):
            EvaluationCreate.model_validate(self.body(q, q))

    def test_a_query_judges_one_document_relevant(self) -> None:
        with pytest.raises(ValidationError, match="at least one document relevant"):
            EvaluationCreate.model_validate(
                self.body({"id": "q", "text": "t", "relevant": {"a.txt": 0}})
            )

    def test_a_query_is_as_long_as_a_search_takes(self) -> None:
        limit = SearchRequest.model_fields["query"].metadata
        assert any(getattr(m, "max_length", None) == QUERY_CHARS for m in limit)


def run(query_count: int, scores: dict[str, float]) -> EvaluationRun:
    now = datetime.now(UTC)
    return EvaluationRun(
        evaluation_id=uuid.uuid4(),
        trigger="scheduled",
        started_at=now,
        finished_at=now,
        query_count=query_count,
        scores={m: {"ndcg_at_10": v} for m, v in scores.items()},
    )


def test_the_gauge_is_the_mean_over_every_query_of_a_base() -> None:
    kb, other = uuid.uuid4(), uuid.uuid4()
    values = gauge_values(
        [
            (kb, run(10, {"vector": 1.0, "keyword": 0.5})),
            (kb, run(30, {"vector": 0.5})),  # keyword skipped in this set
            (other, run(5, {"hybrid": 0.2})),
        ]
    )
    assert values == {
        (str(kb), "vector"): pytest.approx((10 * 1.0 + 30 * 0.5) / 40),
        (str(kb), "keyword"): 0.5,
        (str(other), "hybrid"): 0.2,
    }


def test_the_schedule_runs_only_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    def loops(settings: Settings) -> int:
        runtime: Any = SimpleNamespace(settings=settings)
        unused: Any = None  # the clients and plans, read when the loop ticks
        return len(scheduled_runs(runtime, unused, unused))

    assert Settings().evaluations.schedule_interval_s == 0
    assert loops(Settings()) == 0
    monkeypatch.setenv("EVALUATIONS__SCHEDULE_INTERVAL_S", "86400")
    assert loops(Settings()) == 1
    monkeypatch.setenv("EVALUATIONS__SCHEDULE_INTERVL_S", "60")  # a typo is refused, named
    with pytest.raises(SettingsError, match="EVALUATIONS__SCHEDULE_INTERVL_S"):
        Settings()
