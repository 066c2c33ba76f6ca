"""A full disk for the fault scenarios (issue #14, F12), without filling one.

``file_size_limit(n)`` lowers this process's ``RLIMIT_FSIZE`` soft limit for the block:
a write that would take a file past ``n`` bytes fails with ``EFBIG`` (CPython ignores
``SIGXFSZ``), as a write onto a full disk fails with ``ENOSPC``. The limit is process-wide
(every thread), so keep the block to the one write under test.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def file_size_limit(max_bytes: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
