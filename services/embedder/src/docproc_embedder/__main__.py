"""``python -m docproc_embedder``: embed chunks and write vectors."""

from __future__ import annotations

from docproc_common.runtime import run_service

from docproc_embedder.app import NAME, build


def main() -> None:
    run_service(NAME, build)


if __name__ == "__main__":
    main()
