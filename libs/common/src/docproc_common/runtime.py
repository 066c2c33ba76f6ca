"""How a docproc process runs its services: one shared wiring for every entry point.

A service is described by a ``ServiceSpec`` (its subscriptions, its periodic
tasks, its HTTP routers); ``serve`` runs one or several of them in a process:
one per process behind Kafka (``python -m docproc_<svc>``), all five on the
embedded bus in ``docproc dev``. The handlers are the same code either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError
from fastapi import APIRouter, FastAPI
from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from docproc_common.blocking import BlockingPool
from docproc_common.bus.delivery import Subscription
from docproc_common.bus.embedded import EmbeddedSink, EmbeddedStageRunner
from docproc_common.bus.kafka import KafkaSink, KafkaStageRunner, make_producer
from docproc_common.bus.relay import OutboxRelay, outbox_backlog
from docproc_common.bus.topics import SUBSCRIBERS
from docproc_common.db.engine import SchemaBehind, create_engine, create_sessionmaker
from docproc_common.db.migrate import code_revisions
from docproc_common.http import ReadinessCheck, create_app, metrics_app
from docproc_common.observability import BusMetrics, configure_logging, configure_tracing
from docproc_common.periodic import FailureStreak, Task, periodic, sleep_unless_stopped
from docproc_common.settings import BusMode, Key, MissingKeyError, Settings
from docproc_common.storage import AsyncStorage, create_storage

log = logging.getLogger(__name__)
SCHEMA_WAIT_MAX_S = 10.0  # how late a stage starts consuming once the migration has run


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: ``serve`` owns SIGTERM/SIGINT for every task."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Runtime:
    """What every service of a process shares: settings, database, storage, the blocking pool."""

    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    storage: AsyncStorage
    pool: BlockingPool

    @classmethod
    def create(cls, settings: Settings) -> Runtime:
        if not settings.database.url:
            raise ValueError("DATABASE__URL is not set")
        engine = create_engine(settings.database)
        pool = BlockingPool(settings.limits.file_io_max_workers, name="docproc-file-io")
        return cls(
            settings=settings,
            engine=engine,
            sessionmaker=create_sessionmaker(engine),
            storage=AsyncStorage(create_storage(settings.storage), pool),
            pool=pool,
        )

    async def close(self) -> None:
        await self.engine.dispose()
        self.pool.shutdown()


@dataclass
class ServiceSpec:
    name: str
    subscriptions: Sequence[Subscription] = ()
    tasks: Sequence[Task] = ()
    routers: Sequence[APIRouter] = ()
    middleware: Sequence[tuple[Any, dict[str, Any]]] = ()
    on_shutdown: Sequence[Callable[[], Awaitable[None]]] = field(default_factory=list)
    #: The service's own readiness checks, beside the database, schema and Kafka ones.
    checks: Sequence[ReadinessCheck] = ()
    #: Events its consumer handles at once (see ``bus.kafka``, ``bus.embedded``); above 1
    #: its handlers must be correct when events overlap, two of one key included.
    concurrency: int = 1
    #: Edits of the served OpenAPI document, in place: what the service enforces on its
    #: inputs that its models cannot state (upload: no NUL in any string), so a client or
    #: a schema-driven test reads the rules the API applies.
    openapi: Sequence[Callable[[dict[str, Any]], None]] = ()
    #: The keys it uses (tokens: ``auth``, stored secrets: ``vault``): it does not start
    #: without them, and the chart hands each service exactly these (tests/chart).
    keys: frozenset[Key] = frozenset()


def _database_check(runtime: Runtime) -> ReadinessCheck:
    async def database() -> None:
        async with runtime.engine.connect() as conn:
            await asyncio.wait_for(conn.execute(text("SELECT 1")), 3)

    return database


def _schema_check(runtime: Runtime) -> ReadinessCheck:
    """Not ready while the schema is behind the code's head: before the migration Job has run,
    every loop would fail on a missing table while the pod said ready. A revision this code
    does not know is a newer release's, whose pre-upgrade migration runs while this pod still
    serves (docs/operations.md#upgrades-and-migrations): that is not behind."""
    heads: set[str] = set()
    known: set[str] = set()

    async def schema() -> None:
        if not heads:
            code_heads, code_known = await asyncio.to_thread(code_revisions)
            heads.update(code_heads)
            known.update(code_known)
        async with runtime.engine.connect() as conn:
            has_table = await asyncio.wait_for(
                conn.scalar(text("SELECT to_regclass('alembic_version') IS NOT NULL")), 3
            )
            at = (
                set((await conn.execute(text("SELECT version_num FROM alembic_version"))).scalars())
                if has_table
                else set()
            )
        if not at or at & (known - heads):
            raise SchemaBehind(f"schema at {sorted(at) or 'nothing'}, code at {sorted(heads)}")

    return schema


def _after_schema(runtime: Runtime, consume: Task) -> Task:
    """A stage consumes nothing until the schema is at the code's head: an event handled
    before the migration has run fails every attempt and ends in the dead-letter topic."""
    schema = _schema_check(runtime)

    async def run(stop: asyncio.Event) -> None:
        streak = FailureStreak("waiting for the schema (the migration Job) before consuming", log)
        while not stop.is_set():
            try:
                await schema()
            except Exception as exc:  # noqa: BLE001 - not ready yet: wait, never stop
                streak.failed(exc)
                await sleep_unless_stopped(stop, streak.wait_s(1.0, SCHEMA_WAIT_MAX_S))
            else:
                streak.recovered()
                await consume(stop)
                return

    return run


def _kafka_check(producer: AIOKafkaProducer) -> ReadinessCheck:
    async def kafka() -> None:
        ok = await asyncio.wait_for(producer.client.force_metadata_update(), 3)
        if not ok:
            raise ConnectionError("no Kafka broker answered")

    return kafka


def _outbox_gauge(runtime: Runtime, metrics: Sequence[BusMetrics]) -> Task:
    async def read() -> None:
        async with runtime.sessionmaker() as session:
            backlog, age = await outbox_backlog(session)
        for m in metrics:
            m.outbox_backlog.set(backlog)
            m.outbox_oldest_age.set(age)

    return periodic("reading the outbox backlog", read, 10, log)


async def _start_producer(
    settings: Settings, stop: asyncio.Event, attempts: int = 30
) -> AIOKafkaProducer:
    """Connect to Kafka, waiting for a broker that is still starting (bounded, then fail loudly)."""
    for attempt in range(1, attempts + 1):
        producer = make_producer(settings.kafka)
        try:
            await producer.start()
            return producer
        except KafkaConnectionError:
            await producer.stop()
            if attempt == attempts or stop.is_set():
                raise
            log.warning("Kafka is not reachable yet (attempt %d/%d)", attempt, attempts)
            await asyncio.sleep(min(2.0, 0.2 * attempt))
    raise AssertionError("unreachable")


def build_app(
    runtime: Runtime, specs: Sequence[ServiceSpec], checks: Sequence[ReadinessCheck], title: str
) -> FastAPI:
    app = create_app(
        title=title,
        metrics=runtime.settings.http.metrics_port is None,
        routers=[r for spec in specs for r in spec.routers],
        checks=[
            _database_check(runtime),
            _schema_check(runtime),
            *checks,
            *(c for spec in specs for c in spec.checks),
        ],
    )
    for spec in specs:
        for cls, options in spec.middleware:
            app.add_middleware(cls, **options)
    edits = [edit for spec in specs for edit in spec.openapi]
    if edits:
        generate = app.openapi

        def openapi() -> dict[str, Any]:
            fresh = app.openapi_schema is None
            document = generate()  # FastAPI keeps it in app.openapi_schema: edited once
            if fresh:
                for edit in edits:
                    edit(document)
            return document

        app.openapi = openapi  # type: ignore[method-assign]
    return app


def _server(app: Any, host: str, port: int) -> uvicorn.Server:
    """One listener of the process (the API, or ``/metrics`` alone), run on its event loop."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
    return _QuietServer(config)


async def serve(
    runtime: Runtime,
    specs: Sequence[ServiceSpec],
    *,
    title: str = "docproc",
    stop: asyncio.Event | None = None,
    http: bool = True,
) -> None:
    """Run ``specs`` until ``stop`` is set (or SIGTERM/SIGINT): relay, consumers, tasks, HTTP
    (and ``/metrics`` alone on ``HTTP__METRICS_PORT`` when it is set).
    Nothing starts while a key they use is not set (``MissingKeyError``)."""
    settings = runtime.settings
    settings.require_keys(set().union(*(spec.keys for spec in specs)))
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    metrics = [BusMetrics(spec.name) for spec in specs]
    checks: list[ReadinessCheck] = []
    runners: list[Task] = []
    producer: AIOKafkaProducer | None = None
    if settings.bus.mode is BusMode.KAFKA:
        producer = await _start_producer(settings, stop)
        sink: KafkaSink | EmbeddedSink = KafkaSink(producer, settings.kafka)
        checks.append(_kafka_check(producer))
        for spec, m in zip(specs, metrics, strict=True):
            if spec.subscriptions:
                runner = KafkaStageRunner(
                    spec.name, spec.subscriptions, settings.kafka, m, concurrency=spec.concurrency
                )
                runners.append(_after_schema(runtime, runner.run))
    else:
        sink = EmbeddedSink(SUBSCRIBERS)
        for spec, m in zip(specs, metrics, strict=True):
            if spec.subscriptions:
                embedded = EmbeddedStageRunner(
                    spec.name,
                    spec.subscriptions,
                    runtime.sessionmaker,
                    m,
                    concurrency=spec.concurrency,
                )
                runners.append(_after_schema(runtime, embedded.run))
    relay = OutboxRelay(
        runtime.sessionmaker,
        sink,
        batch=settings.bus.relay_batch,
        interval_s=settings.bus.relay_interval_s,
    )
    tasks: list[Task] = [_outbox_gauge(runtime, metrics), *runners]
    if settings.bus.relay_enabled:
        tasks.append(relay.run)
    tasks += [t for spec in specs for t in spec.tasks]

    servers: list[uvicorn.Server] = []
    if http:
        app = build_app(runtime, specs, checks, title)
        servers.append(_server(app, settings.http.host, settings.http.port))
        if settings.http.metrics_port is not None:
            servers.append(_server(metrics_app(), settings.http.host, settings.http.metrics_port))

    async def supervised(task: Task) -> None:
        try:
            await task(stop)
        except asyncio.CancelledError:
            raise
        except BaseException:
            log.exception("a background task failed; stopping the process")
            stop.set()
            raise

    running = [asyncio.create_task(supervised(t)) for t in tasks]
    running += [asyncio.create_task(server.serve()) for server in servers]
    try:
        await stop.wait()
    finally:
        for server in servers:
            server.should_exit = True
        for t in running[: len(tasks)]:
            t.cancel()
        results = await asyncio.gather(*running, return_exceptions=True)
        for spec in specs:
            for hook in spec.on_shutdown:
                await hook()
        if producer is not None:
            await producer.stop()
        failures = [
            r
            for r in results
            if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)
        ]
        if failures:
            raise failures[0]


def settings_problems(exc: ValidationError) -> str:
    """What a refused ``Settings`` says, one line per problem, each naming its setting."""
    problems = []
    for error in exc.errors():
        where = "__".join(str(part) for part in error["loc"]).upper()
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def run_service(name: str, build: Callable[[Runtime], ServiceSpec]) -> None:
    """Entry point of ``python -m docproc_<svc>``: one service, behind Kafka unless configured otherwise."""
    from docproc_common.settings import get_settings

    configure_logging()
    try:
        settings = get_settings()
    except ValidationError as exc:
        sys.exit(f"docproc-{name} refuses to start: {settings_problems(exc)}")
    configure_tracing(name, settings.otel)

    async def main() -> None:
        runtime = Runtime.create(settings)
        try:
            await serve(runtime, [build(runtime)], title=f"docproc-{name}")
        finally:
            await runtime.close()

    try:
        asyncio.run(main())
    except MissingKeyError as exc:
        sys.exit(f"docproc-{name} refuses to start: {exc}")
