from enum import StrEnum


class Visibility(StrEnum):
    ORG = "org"
    PRIVATE = "private"

    def __str__(self) -> str:
        return str(self.value)
