"""``python -m docproc_teardown``: durable deletion of collections, documents and files."""

from __future__ import annotations

from docproc_common.runtime import run_service

from docproc_teardown.app import NAME, build


def main() -> None:
    run_service(NAME, build)


if __name__ == "__main__":
    main()
