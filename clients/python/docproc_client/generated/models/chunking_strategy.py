from enum import StrEnum


class ChunkingStrategy(StrEnum):
    FIXED = "fixed"
    MARKDOWN = "markdown"
    RECURSIVE = "recursive"

    def __str__(self) -> str:
        return str(self.value)
