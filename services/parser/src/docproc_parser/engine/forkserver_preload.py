"""Imported by the parse fork server only (``processor.PRELOAD``), never by a service.

It loads the parsers and the child's entry point once, then freezes the garbage collector's view of everything
loaded so far: a child's first collection would otherwise walk (and so write to, via
reference counts and GC headers) every object inherited from the server, copying
each page of its ~180 MB on write. Frozen objects are left alone; children start in a
fraction of the time (docs/benchmarks.md, "Knowledge-base parsing").
"""

from __future__ import annotations

import gc

# The parsers, and the child's own entry point (unpickling it would import it otherwise).
import docproc_common.isolation  # noqa: F401

import docproc_parser.engine.worker  # noqa: F401

gc.collect()
gc.freeze()
