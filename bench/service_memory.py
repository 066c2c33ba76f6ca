"""Service process memory at start: what each service's process holds once its code is imported.

For each service, a fresh interpreter imports ``docproc_<svc>.app`` (everything the
service's process loads before its first request or event) and reports its peak RSS
and the import time; then, in the same process, it imports the parsers (PyMuPDF, the
office libraries, LiteParse, Pillow) as every process that touched
``docproc_common.parsing`` or the parse service's processor used to, and reports the
RSS again: the figure the service held before the parsers moved out of it. Only the
parse children (forked from a fork server that preloads them) need the parsers.

    uv run python bench/service_memory.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from typing import Any

SERVICES = ("upload", "parser", "embedder", "sync", "teardown")
#: The services whose process imported the parsers until they moved out of it (chat
#: parsing in the API, the parse service's processor, sync's supported-format check).
HELD_PARSERS = {"upload", "parser", "sync"}
PARSERS = ("docproc_common.parsing.dispatch", "docproc_parser.engine.worker")

PROBE = """
import importlib, json, resource, sys, time
t0 = time.perf_counter()
importlib.import_module(sys.argv[1])
seconds = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
loaded = sorted(m for m in ("pymupdf", "docx", "openpyxl", "PIL", "onnxruntime") if m in sys.modules)
for name in sys.argv[2:]:
    importlib.import_module(name)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss": rss, "with_parsers": before, "loaded": loaded}))
"""


def measure(service: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, f"docproc_{service}.app", *PARSERS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| service | import s | RSS MiB | as before (+ parsers) MiB | before / now | loaded |")
    print("|---|---:|---:|---:|---:|---|")
    for service in SERVICES:
        runs = [measure(service) for _ in range(args.repeat)]
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = statistics.median(r["rss"] for r in runs)
        before = statistics.median(r["with_parsers"] for r in runs)
        held = service in HELD_PARSERS
        was = f"{before:.0f} | {before / rss:.2f}x" if held else "(never loaded them) | -"
        loaded = ", ".join(runs[-1]["loaded"]) or "-"
        print(f"| {service} | {seconds:.2f} | {rss:.0f} | {was} | {loaded} |")


if __name__ == "__main__":
    main()
