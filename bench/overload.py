"""Knowledge-base intake under overload: accepted, refused "busy", time to answer, and RSS.

The upload service runs alone as a process (embedded bus, a fresh database of the test
Postgres, local storage) so nothing parses what it accepts: the parse queue only grows.
``--uploads`` uploads of ``--size-kb`` are sent ``--concurrency`` at a time, once with
``LIMITS__INTAKE_MAX_PARSE_QUEUE=--bound`` and once with the bound off (0). It reports
the 202s and 503s, the median time to each answer, and the process's peak RSS (VmHWM).

    uv run python bench/overload.py [--uploads 400] [--concurrency 32] [--size-kb 1024] [--bound 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database
from docproc_testing.infra import free_port, load_infra_env

MODEL = {"embedding_provider": "local", "embedding_model": "sentence-transformers/all-MiniLM-L6-v2"}


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def run(bound: int, args: argparse.Namespace) -> dict[str, float]:
    infra = load_infra_env(("postgres",))
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE__URL": await create_test_database(infra["DATABASE__URL"]),
            "ENV": "dev",  # signed with the development key (DEV_AUTH)
            "BUS__MODE": "embedded",
            "STORAGE__BACKEND": "local",
            "STORAGE__MEDIA_DIR": tmp,
            "HTTP__PORT": str(port),
            "LIMITS__INTAKE_MAX_PARSE_QUEUE": str(bound),
            "LOG_LEVEL": "WARNING",
        }
        proc = subprocess.Popen([sys.executable, "-m", "docproc_upload"], env=env)
        try:
            token = mint_token(DEV_AUTH, user_id="bench", permissions=[VIEW, EDIT])
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=300,
            ) as client:
                for _ in range(600):
                    try:
                        if (await client.get("/readyz")).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    await asyncio.sleep(0.2)
                kb = (await client.post("/api/v1/kb", json={"name": "overload", **MODEL})).json()
                data = os.urandom(args.size_kb * 512).hex().encode()  # text, size_kb KiB
                gate = asyncio.Semaphore(args.concurrency)
                answers: list[tuple[int, float]] = []

                async def one(i: int) -> None:
                    async with gate:
                        t0 = time.perf_counter()
                        r = await client.post(
                            f"/api/v1/kb/{kb['id']}/documents",
                            files={"file": (f"f{i}.txt", data, "text/plain")},
                        )
                        answers.append((r.status_code, time.perf_counter() - t0))

                t0 = time.perf_counter()
                await asyncio.gather(*(one(i) for i in range(args.uploads)))
                wall = time.perf_counter() - t0
            rss = peak_rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)

    def median(status: int) -> float:
        times = [t for s, t in answers if s == status]
        return statistics.median(times) * 1000 if times else 0.0

    return {
        "bound": bound,
        "accepted": sum(s == 202 for s, _ in answers),
        "busy": sum(s == 503 for s, _ in answers),
        "other": sum(s not in (202, 503) for s, _ in answers),
        "ms_202": median(202),
        "ms_503": median(503),
        "wall_s": wall,
        "rss_mib": rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uploads", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--size-kb", type=int, default=1024)
    parser.add_argument("--bound", type=int, default=50)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(
        "| parse-queue bound | 202 | 503 busy | other | median 202 ms | median 503 ms | wall s | peak RSS MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for bound in (args.bound, 0):
        r = asyncio.run(run(bound, args))
        print(
            f"| {r['bound'] or 'off'} | {r['accepted']} | {r['busy']} | {r['other']} | "
            f"{r['ms_202']:.0f} | {r['ms_503']:.0f} | {r['wall_s']:.1f} | {r['rss_mib']:.0f} |"
        )


if __name__ == "__main__":
    main()
