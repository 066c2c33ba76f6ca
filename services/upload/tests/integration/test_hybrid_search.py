"""Hybrid search on the runtime tables: the keyword column and its GIN index, keyword and
hybrid modes under the same scope and filters, exact identifiers found first among
near-identical documents (where the vector ranking alone misses), no recall lost on
paraphrases, and the migration of a table created before the keyword column."""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator

import pytest
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import add_keyword_index, ensure_table, write_chunks
from docproc_testing.db import create_test_database
from docproc_testing.rows import chunk_stamp
from docproc_upload.search.repository import Hit, SearchFilters
from docproc_upload.search.service import (
    KeywordIndexMissing,
    SearchMode,
    fuse,
    search_collection,
)
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

pytestmark = pytest.mark.integration

TICKETS = ["TCK-48213", "TCK-48231", "TCK-48123", "TCK-84213", "TCK-48312"]
ERRORS = ["E4012", "E4021", "E4102", "E1042", "E4210"]
SKUS = ["WX-2291-BLK", "WX-2219-BLK", "WX-2921-BLK", "WX-9221-BLK", "WX-2291-BLU"]
NEAR_IDENTICAL = (
    [
        f"Support ticket {t}: the customer cannot sign in after resetting the password; "
        "escalated to the identity team, awaiting logs."
        for t in TICKETS
    ]
    + [
        f"Error {e} is raised when the payment gateway times out during checkout; the "
        "client should retry after thirty seconds."
        for e in ERRORS
    ]
    + [
        f"{s}: stainless steel water bottle, 750 ml, double-walled, keeps drinks cold for 24 hours."
        for s in SKUS
    ]
)
IDENTIFIERS = [*TICKETS, *ERRORS, *SKUS]

#: Distinct documents and queries that say the same thing in other words.
TOPICS = [
    "Employees receive twenty-five days of paid annual leave, plus public holidays.",
    "Travel expenses are reimbursed within thirty days once receipts are submitted.",
    "Laptops must use full-disk encryption and lock after five minutes idle.",
    "The cafeteria on the second floor serves lunch from noon until two.",
    "New hires are assigned a mentor for their first three months.",
    "Production deployments are frozen during the last week of December.",
    "Parking permits are issued by the facilities office at reception.",
    "Remote staff may claim a monthly allowance for home internet costs.",
]
PARAPHRASES = [
    ("how much vacation time do workers get each year", 0),
    ("when will I be paid back for my business trip costs", 1),
    ("security rules for company notebooks", 2),
    ("where can I eat at midday in the office", 3),
    ("onboarding support for people who just joined", 4),
    ("can we release code right before new year", 5),
    ("who gives out car spaces", 6),
    ("compensation for broadband when working from home", 7),
]


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    return LocalMiniLM(threads=1)


@pytest.fixture
async def engine(infra: dict[str, str]) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    yield engine
    await engine.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return create_sessionmaker(engine)


async def load(
    sessions: async_sessionmaker[AsyncSession],
    model: LocalMiniLM,
    name: str,
    kb: uuid.UUID,
    documents: list[str],
    config: str = "simple",
) -> list[uuid.UUID]:
    """One single-chunk document per text, named by its position; their vector ids."""
    vectors = model.embed(documents)
    ids = [uuid.uuid4() for _ in documents]
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384, config)
        for i, (doc, body) in enumerate(zip(ids, documents, strict=True)):
            await write_chunks(
                s, name, doc, [body], vectors[i : i + 1], chunk_stamp(kb, filename=str(i))
            )
    async with sessions() as s:
        await s.execute(text(f"ANALYZE rag_{name}"))
    return ids


async def ranked(
    sessions: async_sessionmaker[AsyncSession],
    model: LocalMiniLM,
    name: str,
    kb: uuid.UUID,
    query: str,
    mode: SearchMode,
    top_k: int = 5,
    **kw: object,
) -> list[str]:
    async with sessions() as s, s.begin():
        hits = await search_collection(
            s,
            name,
            model.embed([query])[0] if mode != "keyword" else None,
            knowledge_base_ids=[kb],
            top_k=top_k,
            mode=mode,
            text_query=query,
            **kw,  # type: ignore[arg-type]
        )
    return [h.filename or "" for h in hits]


async def test_the_table_has_its_keyword_column_and_gin_index(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    name = f"kw_{uuid.uuid4().hex[:8]}"
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384, "english")
        index = (
            await s.execute(
                text("SELECT indexdef FROM pg_indexes WHERE indexname = :i"),
                {"i": f"rag_{name}_tsv_idx"},
            )
        ).scalar_one()
        generated = (
            await s.execute(
                text(
                    "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
                    "ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
                    "WHERE d.adrelid = to_regclass(:t) AND a.attname = 'content_tsv'"
                ),
                {"t": f"rag_{name}"},
            )
        ).scalar_one()
    assert index.endswith("USING gin (content_tsv)")
    assert generated == "to_tsvector('english'::regconfig, content)"


async def test_exact_identifiers_rank_their_document_first(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"ids_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    await load(sessions, model, name, kb, NEAR_IDENTICAL)
    firsts: dict[SearchMode, int] = {"vector": 0, "keyword": 0, "hybrid": 0}
    for mode in firsts:
        for i, ident in enumerate(IDENTIFIERS):
            firsts[mode] += (await ranked(sessions, model, name, kb, ident, mode))[:1] == [str(i)]
    # and with the identifier inside a sentence of the document's own words
    for i, ident in enumerate(IDENTIFIERS):
        query = (
            f"{ident} retry" if ident in ERRORS else f"{ident} bottle" if ident in SKUS else ident
        )
        assert (await ranked(sessions, model, name, kb, query, "hybrid"))[0] == str(i), query
    assert firsts["keyword"] == firsts["hybrid"] == len(IDENTIFIERS), firsts
    assert firsts["vector"] < len(IDENTIFIERS), firsts  # what hybrid is for


async def test_paraphrases_lose_no_recall_against_vector_search(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"para_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    await load(sessions, model, name, kb, [*TOPICS, *NEAR_IDENTICAL])
    found: dict[SearchMode, int] = {"vector": 0, "hybrid": 0}
    for query, relevant in PARAPHRASES:
        for mode in found:
            found[mode] += str(relevant) in await ranked(
                sessions, model, name, kb, query, mode, top_k=3
            )
    assert found["hybrid"] >= found["vector"], found
    assert found["vector"] >= len(PARAPHRASES) - 1, found  # the check set is answerable


#: Chunks for the keyword ranking: who holds which query word, how often, in how long a text.
RANKED = [
    "Statins and dementia: a cohort of older adults followed for ten years.",  # 0: rare words
    "Older adults in the cohort reported their diet, sleep and exercise every year, and "
    "the cohort was followed by post for ten years in the study of older adults.",  # 1
    "Dementia dementia dementia.",  # 2: one rare word, repeated
    "The flu in the winter.",  # 3: common words only
    "Parking permits are issued by facilities at reception.",  # 4: none of them
]


async def test_keyword_matches_any_word_ranked_by_bm25(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"bm25_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    await load(sessions, model, name, kb, RANKED)
    question = "do statins lower the risk of dementia in older adults?"
    found = await ranked(sessions, model, name, kb, question, "keyword", top_k=10)
    # no chunk holds every word, yet each holding some is found; the one without is not
    assert set(found) == {"0", "1", "2", "3"}, found
    assert found[0] == "0", found  # the most words, and the rarest


async def test_keyword_keeps_exact_phrases_first_and_excludes(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"phr_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    phrases = [
        "Twelve winters, twelve summers: the months went by.",  # both words, not as a phrase
        "The committee of the hospital met every week and wrote its report over twelve months.",
    ]
    await load(sessions, model, name, kb, [*RANKED, *phrases])
    assert (await ranked(sessions, model, name, kb, "twelve months", "keyword"))[0] == "5"
    assert (await ranked(sessions, model, name, kb, '"twelve months"', "keyword"))[0] == "6"
    excluding = await ranked(sessions, model, name, kb, "older adults -statins", "keyword")
    assert excluding and "0" not in excluding, excluding
    # words that look like query syntax are read as words, never as operators
    for odd in ("it's O'Brien's", "a\\b & c | !d <-> e", "'", "-", '""'):
        await ranked(sessions, model, name, kb, odd, "keyword")


async def test_a_pasted_passage_never_excludes_its_own_words(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"paste_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    passage = (
        "Crohn's disease (CD)-associated dysbiosis - a loss of Faecalibacterium - was "
        "measured at -5 degrees in (-)-epicatechin assays."
    )
    await load(sessions, model, name, kb, [*RANKED, passage])
    # Postgres alone reads "-associated", "- a", "-5" and "-)" as exclusions
    for mode in ("keyword", "hybrid"):
        assert (await ranked(sessions, model, name, kb, passage, mode))[0] == "5", mode
    assert "0" not in await ranked(sessions, model, name, kb, "older -statins", "keyword")


async def test_keyword_and_hybrid_keep_the_scope_and_filters(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"scope_{uuid.uuid4().hex[:8]}"
    mine, theirs = uuid.uuid4(), uuid.uuid4()
    body = "Refund request RF-7731 approved by finance."
    vectors = model.embed([body])
    async with sessions() as s, s.begin():
        await ensure_table(s, name, 384)
        await write_chunks(
            s, name, uuid.uuid4(), [body], vectors, chunk_stamp(theirs, filename="t")
        )
        await write_chunks(
            s, name, uuid.uuid4(), [body], vectors, chunk_stamp(mine, filename="m", source="s3")
        )
    for mode in ("keyword", "hybrid"):
        assert await ranked(sessions, model, name, mine, "RF-7731", mode) == ["m"]
        assert (
            await ranked(
                sessions, model, name, mine, "RF-7731", mode, filters=SearchFilters(source=["web"])
            )
            == []
        )


async def test_the_configuration_reads_the_language(
    sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    kb = uuid.uuid4()
    body = ["The nightly jobs were running slowly."]
    english, simple = f"en_{uuid.uuid4().hex[:8]}", f"si_{uuid.uuid4().hex[:8]}"
    await load(sessions, model, english, kb, body, "english")
    await load(sessions, model, simple, kb, body, "simple")
    kw = {"text_search_config": "english"}
    assert await ranked(sessions, model, english, kb, "job runs", "keyword", **kw) == ["0"]
    assert await ranked(sessions, model, simple, kb, "job runs", "keyword") == []


async def test_a_table_from_before_gets_its_keyword_index(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], model: LocalMiniLM
) -> None:
    name = f"old_{uuid.uuid4().hex[:8]}"
    kb = uuid.uuid4()
    await load(sessions, model, name, kb, NEAR_IDENTICAL)
    async with sessions() as s, s.begin():  # as the table was created before hybrid search
        await s.execute(text(f"DROP INDEX rag_{name}_tsv_idx"))
        await s.execute(text(f"ALTER TABLE rag_{name} DROP COLUMN content_tsv"))
    vector = await ranked(sessions, model, name, kb, TICKETS[0], "vector")
    assert vector
    with pytest.raises(KeywordIndexMissing) as refused:
        await ranked(sessions, model, name, kb, TICKETS[0], "hybrid")
    assert refused.value.fields[0].field == "mode"
    # a search that names no mode (the default, hybrid) is a vector search there
    assert await ranked(sessions, model, name, kb, TICKETS[0], "hybrid", chosen=False) == vector

    assert await add_keyword_index(engine, name, "simple")
    assert not await add_keyword_index(engine, name, "simple")  # nothing left to add
    assert (await ranked(sessions, model, name, kb, TICKETS[0], "hybrid"))[0] == "0"
    async with sessions() as s:
        valid = (
            await s.execute(
                text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:i)"),
                {"i": f"rag_{name}_tsv_idx"},
            )
        ).scalar_one()
    assert valid


def hit(n: int, score: float) -> Hit:
    return Hit(uuid.UUID(int=n), uuid.UUID(int=n), None, 0, "", str(n), score)


def logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_fusion_blends_each_rankings_standard_scores() -> None:
    vector = [hit(1, 0.8), hit(2, 0.7), hit(3, 0.6)]  # full (limit 3): mean 0.7
    keyword = [hit(3, 0.9), hit(4, 0.3)]  # short: the unmatched count 0, mean 0.4
    sd_v = math.sqrt(0.02 / 3)
    sd_k = math.sqrt(0.14)
    z_v = {1: 0.1 / sd_v, 2: 0.0, 3: -0.1 / sd_v}
    z_k = {3: 0.5 / sd_k, 4: -0.1 / sd_k}
    missing_v, missing_k = z_v[3], -0.4 / sd_k  # the last cosine; a keyword score of 0
    fused = fuse(vector, keyword, top_k=4, limit=3, weight=0.5)
    blend = {n: (z_v.get(n, missing_v) + z_k.get(n, missing_k)) / 2 for n in (1, 2, 3, 4)}
    assert [h.filename for h in fused] == ["1", "3", "2", "4"]
    assert [h.score for h in fused] == pytest.approx([logistic(blend[n]) for n in (1, 3, 2, 4)])
    assert all(0 < h.score < 1 for h in fused)
    # the weight moves the blend towards one ranking or the other
    leaning = fuse(vector, keyword, top_k=4, limit=3, weight=0.9)
    assert [h.filename for h in leaning] == ["1", "2", "3", "4"]
    words = fuse(vector, keyword, top_k=4, limit=3, weight=0.1)
    assert [h.filename for h in words] == ["3", "4", "1", "2"]


def test_the_scale_of_a_rankings_scores_does_not_weigh() -> None:
    """A model whose cosines crowd together (bge: 0.80-0.86) counts as one that spreads
    them (0.2-0.8): only how far a chunk stands out of its ranking does."""
    keyword = [hit(4, 0.9), hit(3, 0.5), hit(2, 0.2)]
    spread = [hit(1, 0.8), hit(2, 0.6), hit(3, 0.4), hit(4, 0.2)]
    crowded = [hit(1, 0.86), hit(2, 0.84), hit(3, 0.82), hit(4, 0.80)]
    for weight in (0.3, 0.6, 0.9):
        a = fuse(spread, keyword, top_k=4, limit=4, weight=weight)
        b = fuse(crowded, keyword, top_k=4, limit=4, weight=weight)
        assert [h.filename for h in a] == [h.filename for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b])


def test_the_standard_scores_do_not_depend_on_how_many_hits_were_asked_for() -> None:
    """A search of top_k 100 fuses 100 candidates a leg, one of top_k 5 fuses 50: each
    chunk's standard score is taken against the same first 50."""
    vector = [hit(n, 0.9 - n / 250) for n in range(100)]
    words = [hit(n, 10.0 - n / 10 + (n * 7) % 5 / 10) for n in range(100)]
    keyword = sorted(words, key=lambda h: h.score, reverse=True)  # best first, as ranked
    few = {h.filename: h.score for h in fuse(vector[:50], keyword[:50], top_k=10, limit=50)}
    many = {h.filename: h.score for h in fuse(vector, keyword, top_k=10, limit=100)}
    assert list(few) == list(many)
    assert list(few.values()) == pytest.approx(list(many.values()))


def test_a_ranking_whose_scores_are_all_alike_adds_nothing() -> None:
    vector = [hit(1, 0.5), hit(2, 0.4)]
    fused = fuse(vector, [], top_k=2, limit=3, weight=0.75)
    assert [h.filename for h in fused] == ["1", "2"]
    sd = math.sqrt(0.14 / 3)  # 0.5, 0.4 and the unmatched 0: mean 0.3
    assert [h.score for h in fused] == pytest.approx(
        [logistic(0.75 * 0.2 / sd), logistic(0.75 * 0.1 / sd)]
    )
    same = fuse([hit(1, 0.2), hit(2, 0.2)], [hit(2, 0.7), hit(1, 0.7)], top_k=2, limit=2)
    assert [h.filename for h in same] == ["1", "2"]  # the vector ranking's order
    assert [h.score for h in same] == [0.5, 0.5]
