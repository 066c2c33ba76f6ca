from enum import StrEnum


class IngestionConfigParser(StrEnum):
    LITEPARSE = "liteparse"
    LLAMAPARSE = "llamaparse"
    PYMUPDF = "pymupdf"

    def __str__(self) -> str:
        return str(self.value)
