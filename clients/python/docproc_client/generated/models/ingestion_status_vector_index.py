from enum import StrEnum


class IngestionStatusVectorIndex(StrEnum):
    BUILDING = "building"
    LOADING = "loading"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
