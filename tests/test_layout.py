"""What the repository's layout promises (docs/architecture.md).

``libs/common`` holds only what two or more members use, so it stays a minority of the
code: its share is the lines (every line, blank and comment too) of the ``*.py`` files
under ``libs/common/src`` over those under ``libs/common/src``, ``services/*/src`` and
``cli/src`` (test support, ``libs/testing``, and every ``tests`` folder count on neither
side), at most ``COMMON_SHARE_MAX``.

The decision records in ``docs/decisions`` are numbered once each, in the order they were
added, and every ``docs/decisions/<file>`` the tree names is one of them.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DECISIONS = ROOT / "docs" / "decisions"
COMMON_SHARE_MAX = 0.40


def lines_of_python(src: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in src.rglob("*.py"))


def test_libs_common_is_at_most_its_share_of_the_code() -> None:
    common = lines_of_python(ROOT / "libs" / "common" / "src")
    members = {
        str(src.relative_to(ROOT)): lines_of_python(src)
        for src in [*sorted((ROOT / "services").glob("*/src")), ROOT / "cli" / "src"]
    }
    share = common / (common + sum(members.values()))
    assert share <= COMMON_SHARE_MAX, (
        f"libs/common/src is {share:.1%} of the code ({common} lines; {members}): move what "
        "one member alone uses to that member"
    )


def test_each_decision_record_has_its_own_number() -> None:
    numbers = Counter(p.name.split("-", 1)[0] for p in DECISIONS.glob("*.md"))
    assert sorted(numbers) == [f"{n:04d}" for n in range(1, len(numbers) + 1)]
    assert not [n for n, count in numbers.items() if count > 1]
    for path in DECISIONS.glob("*.md"):
        title = path.read_text().splitlines()[0]
        assert title.startswith(f"# {path.name[:4]} "), f"{path.name}: {title}"


def test_every_named_decision_record_exists() -> None:
    tracked = subprocess.run(
        ["git", "grep", "-I", "-h", "-o", r"decisions/[0-9]\{4\}[^ )`'\"]*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    named = {re.sub(r"[.,:;]+$", "", n).removeprefix("decisions/") for n in tracked}
    missing = sorted(n for n in named if not (DECISIONS / n).is_file())
    assert not missing, f"named but not in docs/decisions: {missing}"
