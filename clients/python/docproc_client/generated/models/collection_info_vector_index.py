from enum import StrEnum


class CollectionInfoVectorIndex(StrEnum):
    BUILDING = "building"
    LOADING = "loading"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
