from enum import StrEnum


class ChatFileOutFileType(StrEnum):
    DOCUMENT = "document"
    DOCX = "docx"
    EMAIL = "email"
    IMAGE = "image"
    PDF = "pdf"
    PRESENTATION = "presentation"
    SPREADSHEET = "spreadsheet"
    TEXT = "text"

    def __str__(self) -> str:
        return str(self.value)
