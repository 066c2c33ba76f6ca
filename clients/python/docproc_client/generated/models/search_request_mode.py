from enum import StrEnum


class SearchRequestMode(StrEnum):
    HYBRID = "hybrid"
    KEYWORD = "keyword"
    VECTOR = "vector"

    def __str__(self) -> str:
        return str(self.value)
