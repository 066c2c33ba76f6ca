"""Chat-upload latency: small uploads alone, and while heavy files are being parsed.

Starts the upload service as a real uvicorn server process (``python -m
docproc_upload``) on 127.0.0.1, on a fresh database of the test Postgres
(``scripts/infra.py``), with the embedded bus (or Kafka with ``--bus kafka``), and
measures ``POST /api/v1/files/upload`` from a separate client process:

1. *alone*: ``--requests`` uploads of a 100 KB text file at ``--concurrency`` 16;
2. *loaded*: the same, while ``--heavy`` 4 uploads of ~10 MB spreadsheets and PDFs are
   kept in flight (one is re-sent as soon as one finishes).

The loaded p95 should stay within 2x of the one alone. It also samples the resident
memory of the server process and of its parse children, and runs
``bench/parse_memory.py`` for the per-format peak RSS of one parse.

    uv run python bench/uploads.py                       # default: child-process parsing
    uv run python bench/uploads.py --parse-workers 0     # baseline: parsing in threads
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import random
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
from docproc_common.auth import mint_token
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database, plain_dsn
from docproc_testing.infra import find_repo_root, load_infra_env
from docproc_testing.processes import stop_group, wait_ready

BENCH = Path(__file__).resolve().parent
CACHE = Path("/tmp/docproc-parse-bench")
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _parse_memory() -> Any:
    """bench/parse_memory.py, for its 10 MB file builders (one implementation of them)."""
    spec = importlib.util.spec_from_file_location(
        "docproc_bench_parse_memory", BENCH / "parse_memory.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def heavy_files(size_mb: float) -> list[tuple[str, bytes, str]]:
    pm = _parse_memory()
    CACHE.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt, mime in (("xlsx", XLSX), ("pdf", "application/pdf")):
        path = CACHE / f"bench-{size_mb:g}mb.{fmt}"
        if not path.exists():
            print(f"generating {path} ...", file=sys.stderr)
            path.write_bytes(pm.MAKERS[fmt](int(size_mb * 2**20), random.Random(7)))
        out.append((path.name, path.read_bytes(), mime))
    return out


def small_text(size: int = 100 * 1024) -> bytes:
    rng = random.Random(3)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(2000)]
    lines: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choices(words, k=12))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines).encode())[:size]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        wait_ready(self.process, self.url, self.log, "the server")

    def stop(self) -> None:
        stop_group(self.process)


def start_server(env: dict[str, str], work: Path) -> Server:
    port = free_port()
    log = work / "server.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "docproc_upload"],
        env={**os.environ, "ENV": "dev", **env, "HTTP__PORT": str(port)},
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = Server(process, port, log)
    server.wait_ready()
    return server


class MemorySampler:
    """Peak RSS of the server process and of its children (the parse processes)."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.server_peak = 0
        self.child_peak = 0
        self.children_total_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(psutil.Error):
                self.server_peak = max(self.server_peak, self.process.memory_info().rss)
                sizes = []
                for child in self.process.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        sizes.append(child.memory_info().rss)
                if sizes:
                    self.child_peak = max(self.child_peak, max(sizes))
                    self.children_total_peak = max(self.children_total_peak, sum(sizes))

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


SERVER_PID: list[int] = []


class CpuMeter:
    """CPU seconds spent during a phase: by the server, by niced processes, by everyone."""

    def __init__(self, phase: Any) -> None:
        self.phase = phase

    @staticmethod
    def _read() -> tuple[float, float, float]:
        server = psutil.Process(SERVER_PID[0]).cpu_times() if SERVER_PID else None
        machine = psutil.cpu_times()
        busy = sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)
        return (server.user + server.system if server else 0.0, machine.nice, busy)

    def __enter__(self) -> CpuMeter:
        self.start = self._read()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._read()
        self.phase.server_cpu = end[0] - self.start[0]
        self.phase.niced_cpu = end[1] - self.start[1]
        self.phase.busy_cpu = end[2] - self.start[2]


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0
    heavy: list[float] = field(default_factory=list)
    heavy_errors: int = 0
    server_cpu: float = 0.0  # CPU seconds of the server process
    niced_cpu: float = 0.0  # machine-wide CPU seconds at nice > 0: the parse children
    busy_cpu: float = 0.0  # machine-wide CPU seconds not idle (everyone on the machine)

    def pct(self, q: float) -> float:
        data = sorted(self.latencies)
        return data[min(len(data) - 1, int(q * len(data)))] * 1000


async def small_uploads(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    data: bytes,
    count: int,
    concurrency: int,
    phase: Phase,
) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            started = time.perf_counter()
            r = await client.post(
                "/api/v1/files/upload",
                files={"file": (f"note-{i}.txt", data, "text/plain")},
                headers=headers,
            )
            phase.latencies.append(time.perf_counter() - started)
            if r.status_code != 201:
                phase.errors += 1

    started = time.perf_counter()
    with CpuMeter(phase):
        await asyncio.gather(*(one(i) for i in range(count)))
    phase.seconds = time.perf_counter() - started


async def heavy_loop(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    files: list[tuple[str, bytes, str]],
    slot: int,
    stop: asyncio.Event,
    phase: Phase,
) -> None:
    n = slot
    while not stop.is_set():
        name, data, mime = files[n % len(files)]
        n += 1
        started = time.perf_counter()
        r = await client.post(
            "/api/v1/files/upload", files={"file": (name, data, mime)}, headers=headers
        )
        phase.heavy.append(time.perf_counter() - started)
        if r.status_code != 201:
            phase.heavy_errors += 1
            if phase.heavy_errors == 1:
                print(
                    f"heavy upload of {name} failed: {r.status_code} {r.text[:300]}",
                    file=sys.stderr,
                )


async def measure(server: Server, args: argparse.Namespace) -> list[Phase]:
    token = mint_token(DEV_AUTH, user_id="bench")
    headers = {"Authorization": f"Bearer {token}"}
    data = small_text()
    heavy = heavy_files(args.heavy_mb)
    limits = httpx.Limits(max_connections=args.concurrency + args.heavy + 4)
    async with httpx.AsyncClient(base_url=server.url, timeout=600, limits=limits) as client:
        warm = Phase("warm-up")
        await small_uploads(client, headers, data, 48, args.concurrency, warm)
        for name, body, mime in heavy:  # starts the forkserver, fills caches
            await client.post(
                "/api/v1/files/upload", files={"file": (name, body, mime)}, headers=headers
            )

        alone = Phase("alone")
        await small_uploads(client, headers, data, args.requests, args.concurrency, alone)

        loaded = Phase(f"with {args.heavy} heavy uploads in flight")
        stop = asyncio.Event()
        loops = [
            asyncio.create_task(heavy_loop(client, headers, heavy, i, stop, loaded))
            for i in range(args.heavy)
        ]
        await asyncio.sleep(args.head_start)
        await small_uploads(client, headers, data, args.requests, args.concurrency, loaded)
        stop.set()
        await asyncio.gather(*loops)
    return [alone, loaded]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=480)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--heavy", type=int, default=4)
    parser.add_argument("--heavy-mb", type=float, default=9.5, help="just under the 10 MB limit")
    parser.add_argument(
        "--head-start", type=float, default=1.0, help="seconds the heavy uploads run first"
    )
    parser.add_argument("--bus", choices=["embedded", "kafka"], default="embedded")
    parser.add_argument(
        "--parse-workers", type=int, default=None, help="LIMITS__CHAT_PARSE_WORKERS (0: threads)"
    )
    parser.add_argument("--no-parse-memory", action="store_true", help="skip bench/parse_memory.py")
    args = parser.parse_args()

    services = ("postgres", "kafka") if args.bus == "kafka" else ("postgres",)
    infra = load_infra_env(services)
    database_url = asyncio.run(create_test_database(infra["DATABASE__URL"]))
    work = Path(tempfile.mkdtemp(prefix="docproc-bench-uploads-"))
    env = {
        "DATABASE__URL": database_url,
        "BUS__MODE": args.bus,
        "STORAGE__MEDIA_DIR": str(work / "media"),
        "DOCPROC_HOME": str(work / "home"),
        "LOG_LEVEL": "WARNING",
    }
    if args.bus == "kafka":
        env["KAFKA__BOOTSTRAP_SERVERS"] = infra["KAFKA__BOOTSTRAP_SERVERS"]
    if args.parse_workers is not None:
        env["LIMITS__CHAT_PARSE_WORKERS"] = str(args.parse_workers)
    heavy_files(args.heavy_mb)  # generate before the clock starts
    server = start_server(env, work)
    SERVER_PID.append(server.process.pid)
    try:
        with MemorySampler(server.process.pid) as memory:
            phases = asyncio.run(measure(server, args))
    finally:
        server.stop()
        asyncio.run(_drop(infra["DATABASE__URL"], database_url))

    workers = args.parse_workers if args.parse_workers is not None else "default (2)"
    print(
        f"\nbus={args.bus} parse workers={workers} requests={args.requests} "
        f"concurrency={args.concurrency} heavy={args.heavy}x~{args.heavy_mb:g} MB (xlsx, pdf) "
        f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| phase | small uploads | errors | p50 ms | p95 ms | p99 ms | max ms | uploads/s "
        "| heavy done | heavy p50 s | server CPU s | parse children CPU s | machine busy CPU s | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in phases:
        heavy = f"{statistics.median(p.heavy):.2f}" if p.heavy else "-"
        print(
            f"| {p.name} | {len(p.latencies)} | {p.errors} | {p.pct(0.5):.0f} | {p.pct(0.95):.0f} | "
            f"{p.pct(0.99):.0f} | {max(p.latencies) * 1000:.0f} | {len(p.latencies) / p.seconds:.1f} | "
            f"{len(p.heavy)} ({p.heavy_errors} failed) | {heavy} | {p.server_cpu:.1f} | "
            f"{p.niced_cpu:.1f} | {p.busy_cpu:.1f} | {p.seconds:.1f} |"
        )
    alone, loaded = phases
    ratio = loaded.pct(0.95) / alone.pct(0.95)
    print(f"\nloaded p95 / alone p95 = {ratio:.2f} ({'within' if ratio <= 2 else 'ABOVE'} 2x)")
    mib = 2**20
    print(
        f"peak RSS: server process {memory.server_peak / mib:.0f} MiB, largest parse child "
        f"{memory.child_peak / mib:.0f} MiB, all children together {memory.children_total_peak / mib:.0f} MiB "
        "(children share the forkserver's pages copy-on-write; RSS counts them in each)"
    )
    if not args.no_parse_memory:
        print("\nper-format peak RSS of one parse (bench/parse_memory.py):\n")
        subprocess.run([sys.executable, str(BENCH / "parse_memory.py")], check=True)


async def _drop(admin_url: str, url: str) -> None:
    name = url.rsplit("/", 1)[1]
    conn = await asyncpg.connect(plain_dsn(admin_url))
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await conn.close()


if __name__ == "__main__":
    find_repo_root()
    main()
