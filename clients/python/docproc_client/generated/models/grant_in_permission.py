from enum import StrEnum


class GrantInPermission(StrEnum):
    EDIT = "edit"
    VIEW = "view"

    def __str__(self) -> str:
        return str(self.value)
