from enum import StrEnum


class SourceCreateSyncMode(StrEnum):
    FULL = "full"
    NEW_ONLY = "new_only"
    UPDATE_ONLY = "update_only"

    def __str__(self) -> str:
        return str(self.value)
