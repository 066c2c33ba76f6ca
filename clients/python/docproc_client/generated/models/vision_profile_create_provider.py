from enum import StrEnum


class VisionProfileCreateProvider(StrEnum):
    OPENAI = "openai"
    OPENAI_COMPATIBLE = "openai-compatible"
    OPENROUTER = "openrouter"

    def __str__(self) -> str:
        return str(self.value)
