"""Where a vision model profile may send its key (``vision_profiles.service.address``): the
provider's own host, or an address the deployment allows (the chart's
``vision.allowedBaseUrls``); a refusal names ``base_url``."""

from __future__ import annotations

import pytest
from docproc_common.errors import InvalidInput
from docproc_upload.vision_profiles.schemas import VisionProfileCreate
from docproc_upload.vision_profiles.service import address

ALLOWED = ["http://vision.internal:8000/v1"]


def body(**fields: object) -> VisionProfileCreate:
    return VisionProfileCreate.model_validate({"name": "p", "model": "m", **fields})


def test_a_provider_goes_to_its_own_address_unless_told() -> None:
    assert address(body(provider="openai"), []) == "https://api.openai.com/v1"
    assert address(body(provider="openrouter"), []) == "https://openrouter.ai/api/v1"
    assert (
        address(body(provider="openai-compatible", base_url=ALLOWED[0] + "/"), ALLOWED)
        == (ALLOWED[0])
    )


@pytest.mark.parametrize(
    ("fields", "allowed"),
    [
        ({"provider": "openai-compatible"}, ALLOWED),  # no address at all
        ({"provider": "openai-compatible", "base_url": "http://vision.internal:8000/v1"}, []),
        ({"provider": "openai-compatible", "base_url": "http://vision.internal:8001/v1"}, ALLOWED),
        ({"provider": "openai", "base_url": "http://api.openai.com/v1"}, []),  # not https
        ({"provider": "openai", "base_url": "https://api.openai.com.evil.example/v1"}, []),
        ({"provider": "openai", "base_url": "https://u:p@api.openai.com/v1"}, []),
        ({"provider": "openai-compatible", "base_url": "ftp://vision.internal/v1"}, ALLOWED),
    ],
)
def test_an_address_a_vision_key_may_not_reach_is_refused_naming_base_url(
    fields: dict[str, str], allowed: list[str]
) -> None:
    with pytest.raises(InvalidInput) as info:
        address(body(**fields), allowed)
    assert [f.field for f in info.value.fields] == ["base_url"]
