from enum import StrEnum


class FileType(StrEnum):
    ARCHIVE = "archive"
    DOC = "doc"
    DOCUMENT = "document"
    DOCX = "docx"
    EMAIL = "email"
    IMAGE = "image"
    PDF = "pdf"
    PRESENTATION = "presentation"
    SPREADSHEET = "spreadsheet"
    TEXT = "text"
    TIFF = "tiff"

    def __str__(self) -> str:
        return str(self.value)
