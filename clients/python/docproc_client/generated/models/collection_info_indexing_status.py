from enum import StrEnum


class CollectionInfoIndexingStatus(StrEnum):
    COMPLETE = "complete"
    INDEXING = "indexing"

    def __str__(self) -> str:
        return str(self.value)
