"""``python -m docproc_sync``: sync sources into knowledge bases."""

from __future__ import annotations

from docproc_common.runtime import run_service

from docproc_sync.app import NAME, build


def main() -> None:
    run_service(NAME, build)


if __name__ == "__main__":
    main()
