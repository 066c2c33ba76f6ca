from enum import StrEnum


class KnowledgeBaseCreateScopeType0(StrEnum):
    APP = "app"
    ORG = "org"
    PERSONAL = "personal"

    def __str__(self) -> str:
        return str(self.value)
