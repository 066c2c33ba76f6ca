"""Rendering the chart for its tests: the pinned helm (built by scripts/helm.sh) and a render helper."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "helm.sh"
CHART = ROOT / "deploy" / "helm" / "docproc"
HELM = ROOT / ".cache" / "bin" / "helm"
KUBE_VERSION = "1.33.0"

Doc = dict[str, Any]


def _run(
    *args: str | Path, timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="session")
def helm() -> Path:
    result = _run("bash", SCRIPT, "install", timeout=1800)
    if result.returncode != 0:
        pytest.skip(
            f"helm could not be built (scripts/helm.sh install exited {result.returncode}): "
            f"{result.stderr.strip()[-400:]}"
        )
    return HELM


def render(
    helm: Path, *args: str, values: dict[str, Any] | None = None, tmp: Path | None = None
) -> subprocess.CompletedProcess[str]:
    cmd: list[str | Path] = [helm, "template", "docproc", CHART, "--namespace", "docproc"]
    cmd += ["--kube-version", KUBE_VERSION, *args]
    if values is not None:
        assert tmp is not None
        path = tmp / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        cmd += ["-f", path]
    return _run(*cmd)


def render_docs(helm: Path, *args: str, **kw: Any) -> list[Doc]:
    result = render(helm, *args, **kw)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]
