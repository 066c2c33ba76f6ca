"""Installed size of each service's locked closure: what its image's Python environment holds.

    uv run python bench/closure_sizes.py [REPO]

The closure is ``uv export --frozen --no-dev --package docproc-<svc>`` over REPO's uv.lock
(default: this checkout); each distribution's size is the sum of its installed files in
this environment (``uv sync --all-packages`` installs them all), workspace members aside.
A markdown table, one row a service: distributions, size, the five largest (MiB).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_declared_dependencies import SERVICES, closure  # noqa: E402


def installed_sizes() -> dict[str, int]:
    sizes: dict[str, int] = {}
    for dist in importlib.metadata.distributions():
        total = 0
        for file in dist.files or ():
            try:
                total += os.path.getsize(dist.locate_file(file))  # type: ignore[arg-type]
            except OSError:
                continue
        sizes[canonicalize_name(dist.metadata["Name"])] = total
    return sizes


def main() -> None:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    sizes = installed_sizes()
    print("| service | distributions | installed | largest (MiB) |")
    print("|---|---|---|---|")
    for svc in SERVICES:
        names = closure(svc, repo)
        total = sum(sizes.get(n, 0) for n in names)
        largest = sorted(names, key=lambda n: -sizes.get(n, 0))[:5]
        shown = ", ".join(f"{n} {sizes.get(n, 0) / 2**20:.0f}" for n in largest)
        print(f"| docproc-{svc} | {len(names)} | {total / 2**20:.0f} MiB | {shown} |")


if __name__ == "__main__":
    main()
