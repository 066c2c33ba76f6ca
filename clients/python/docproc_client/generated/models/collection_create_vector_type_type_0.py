from enum import StrEnum


class CollectionCreateVectorTypeType0(StrEnum):
    HALFVEC = "halfvec"
    VECTOR = "vector"

    def __str__(self) -> str:
        return str(self.value)
