"""Every series the teardown service exports (``docproc_teardown_*``)."""

from __future__ import annotations

from docproc_common.observability import counter, gauge

TEARDOWNS = counter(
    "docproc_teardown_teardowns_total", "Teardowns finished, by outcome", ("outcome",)
)
PENDING = gauge("docproc_teardown_reservations_pending", "Teardown reservations not yet finished")
OLDEST = gauge(
    "docproc_teardown_reservation_oldest_age_seconds",
    "Age of the oldest pending teardown reservation",
)
