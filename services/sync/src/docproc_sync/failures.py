"""What a sync run's log says when the run ends without finishing: the words the service and
the stage's ``give_up`` store, in a module of their own so the stage (and its unit tests)
need not load the connectors to say them."""

from __future__ import annotations


def run_failed(exc: BaseException) -> str:
    """A run's error message when it stopped on ``exc`` (its class only, never its text)."""
    return f"The run failed ({type(exc).__name__}); the next run picks up where it stopped"
