from enum import StrEnum


class EmbeddingEndpointCreateScope(StrEnum):
    DEPLOYMENT = "deployment"
    ORG = "org"

    def __str__(self) -> str:
        return str(self.value)
