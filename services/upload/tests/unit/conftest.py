"""Unit tests of the chat-attachment pieces: no database, no file store."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # chat_inputs
