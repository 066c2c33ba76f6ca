"""``python -m docproc_sync``: sync sources into knowledge bases; with ``rag-sync-gdrive``,
the operator's one-shot import of a Drive folder (``docproc_sync.operator_import``)."""

from __future__ import annotations

import sys

from docproc_common.runtime import run_service

from docproc_sync.app import NAME, build


def main() -> None:
    if sys.argv[1:2] == ["rag-sync-gdrive"]:
        from docproc_sync.operator_import import main as operator_import

        sys.exit(operator_import(sys.argv[2:]))
    run_service(NAME, build)


if __name__ == "__main__":
    main()
