"""``python -m docproc_parser``: parse and chunk knowledge-base documents."""

from __future__ import annotations

from docproc_common.runtime import run_service

from docproc_parser.app import NAME, build


def main() -> None:
    run_service(NAME, build)


if __name__ == "__main__":
    main()
