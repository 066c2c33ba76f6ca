from enum import StrEnum


class EmbeddingProviderOutCredential(StrEnum):
    ENDPOINT = "endpoint"
    NONE = "none"
    SECRET = "secret"

    def __str__(self) -> str:
        return str(self.value)
