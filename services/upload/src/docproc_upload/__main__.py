"""``python -m docproc_upload``: the public API behind the gateway."""

from __future__ import annotations

from docproc_common.runtime import run_service

from docproc_upload.app import NAME, build


def main() -> None:
    run_service(NAME, build)


if __name__ == "__main__":
    main()
