"""The first upload on a fresh process leaves the event loop free: nothing heavy is imported on it.

A text upload used to import the parsing dispatch (PyMuPDF, the office libraries:
5 s of CPU here) on the event loop, and /healthz waited for it. A fresh interpreter
runs the app and /healthz calls while the first text upload and then the first image
upload are in flight, and reports the most CPU time the loop's thread spent in one
callback (``time.thread_time`` around each ``Handle._run``). That is the mechanism: a
callback that imports or parses holds the loop for its CPU time. Wall-clock lag, timed
before, also grows when a loaded host deschedules the process, and failed at load 12.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import chat_inputs as gen
import pytest

pytestmark = pytest.mark.integration

PARSERS = ("pymupdf", "docx", "pptx", "openpyxl", "xlrd", "odf", "liteparse")
#: The dispatch import alone takes 5 s of CPU here; the first text upload's largest
#: callback took 0.23 s and the image's 4 ms (CPU time, which a busy host does not stretch).
MAX_CALLBACK_CPU_S = 1.0

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from asyncio import events
    from pathlib import Path

    sys.path.insert(0, sys.argv[1])
    from chat_support import auth, chat_api

    PARSERS = json.loads(sys.argv[5])
    LONGEST = [0.0]  # the most CPU one callback of the loop's thread used
    run = events.Handle._run


    def timed(handle):
        started = time.thread_time()
        try:
            return run(handle)
        finally:
            LONGEST[0] = max(LONGEST[0], time.thread_time() - started)


    events.Handle._run = timed


    async def first_upload(api, name, data, mime):
        health, stop = [], asyncio.Event()

        async def healthz():
            while not stop.is_set():
                health.append((await api.client.get("/healthz")).status_code)
                await asyncio.sleep(0.02)

        task = asyncio.create_task(healthz())
        await asyncio.sleep(0.05)
        LONGEST[0] = 0.0
        response = await api.upload("u-first", name, data, mime)
        longest = LONGEST[0]
        stop.set()
        await task
        return {
            "status": response.status_code,
            "max_callback_cpu_s": longest,
            "health": sorted(set(health)),
            "health_calls": len(health),
        }


    async def main():
        infra = json.loads(sys.argv[3])
        async with chat_api(sys.argv[2], infra, "local", Path(sys.argv[4])) as api:
            text = await first_upload(api, "notes.txt", b"month,total\\njan,10\\n", "text/plain")
            png = bytes.fromhex(sys.argv[6])
            image = await first_upload(api, "photo.png", png, "image/png")
        loaded = sorted(m for m in PARSERS if m in sys.modules)
        print(json.dumps({"text": text, "image": image, "parsers": loaded}))


    asyncio.run(main())
    """
)


def test_the_first_uploads_leave_the_loop_and_health_free(
    database_url: str, infra: dict[str, str], tmp_path: Path
) -> None:
    tests = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(tests),
            database_url,
            json.dumps(infra),
            str(tmp_path),
            json.dumps(PARSERS),
            gen.make_image("PNG").hex(),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    print(measured)
    assert measured["parsers"] == [], "a parser library was loaded in the API process"
    for upload in ("text", "image"):
        m = measured[upload]
        assert m["status"] == 201, m
        assert m["health"] == [200], m
        assert m["max_callback_cpu_s"] < MAX_CALLBACK_CPU_S, m
