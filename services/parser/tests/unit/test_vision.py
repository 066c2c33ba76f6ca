"""Describing a document's images: the first failure ends the document's requests.

Pure logic over httpx's mock transport: one picture's request is refused at once (401)
while another's is still being answered; once the document has failed, nothing more is
asked of the endpoint.
"""

import asyncio

import httpx
import pytest
from docproc_common.ingestion import VisionProfile
from docproc_parser.engine.errors import DocumentUnreadable
from docproc_parser.engine.jobs import ExtractedImage
from docproc_parser.engine.vision import VisionDescriber

BASE_URL = "http://127.0.0.1:9/v1"


def image(digest: str) -> ExtractedImage:
    return ExtractedImage(digest, digest.encode(), "image/png", 10, 10)


async def test_a_failing_image_cancels_the_requests_still_running() -> None:
    answered: list[str] = []

    async def endpoint(request: httpx.Request) -> httpx.Response:
        if b"cmVmdXNlZA" in request.content:  # base64 of "refused"
            return httpx.Response(401)
        await asyncio.sleep(0.5)  # a slow model, still answering when the other fails
        answered.append("slow")
        return httpx.Response(200, json={"choices": [{"message": {"content": "a chart"}}]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        describer = VisionDescriber(
            http,
            VisionProfile(base_url=BASE_URL, model="m"),
            None,
            allowed_prefixes=(BASE_URL,),
        )
        with pytest.raises(DocumentUnreadable, match="refused the key"):
            await describer.describe_all({"s": image("slow"), "r": image("refused")})
        await asyncio.sleep(0.8)
    assert answered == []  # the slow request was cancelled, not left to finish
