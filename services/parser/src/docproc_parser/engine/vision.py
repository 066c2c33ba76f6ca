"""Image description through an OpenAI-compatible chat endpoint with vision.

The collection's vision model profile (``vision_profile_id``, resolved by the parse stage)
or its inline ``vision_profile`` names the endpoint, the model and the vault key.
Each distinct image (by its bytes' digest) is described once per document, a few at
a time; the caller puts each description into the text of every page that shows
the image.

The profile's address receives the organization's key, so it must be one of the
well-known hosts (https) or start with an address the deployment allows
(``PARSER__VISION_ALLOWED_BASE_URLS``: an in-cluster model server, or 127.0.0.1
in tests); anything else is refused before a byte is sent.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Mapping, Sequence

import httpx
from docproc_common.errors import RetryableError
from docproc_common.ingestion import VisionProfile, vision_address_allowed

from docproc_parser.engine import errors
from docproc_parser.engine.jobs import ExtractedImage

log = logging.getLogger(__name__)

PROMPT = (
    "Describe this image from a document so that it can be found by a text search: "
    "what it shows, any text written in it, and what a chart, table or diagram says. "
    "Plain sentences, at most 120 words, no preamble."
)
_ATTEMPTS = 3
_CONCURRENCY = 4


def allowed(base_url: str, allowed_prefixes: Sequence[str]) -> bool:
    return vision_address_allowed(base_url, allowed_prefixes)


class VisionUnavailable(RetryableError):
    """The vision endpoint did not answer, or answered 429/5xx: worth another attempt later."""


class VisionDescriber:
    def __init__(
        self,
        http: httpx.AsyncClient,
        profile: VisionProfile,
        api_key: str | None,
        *,
        allowed_prefixes: Sequence[str] = (),
    ) -> None:
        if not allowed(profile.base_url, allowed_prefixes):
            raise errors.DocumentUnreadable(
                "VisionEndpointNotAllowed",
                "the vision profile's address is neither a known provider host nor one this "
                "deployment allows (PARSER__VISION_ALLOWED_BASE_URLS); fix vision_profile.base_url, "
                "then retry the upload",
            )
        self._http = http
        self._profile = profile
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def describe_all(self, images: Mapping[str, ExtractedImage]) -> dict[str, str]:
        """digest -> description, for every image (each distinct image asked once).

        The first image that fails the document cancels the others: ``gather`` alone would
        leave them running, asking (and billing) the endpoint for a document already failed.
        """
        gate = asyncio.Semaphore(_CONCURRENCY)

        async def one(image: ExtractedImage) -> tuple[str, str]:
            async with gate:
                return image.digest, await self.describe(image)

        tasks = [asyncio.ensure_future(one(img)) for img in images.values()]
        try:
            pairs = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return dict(pairs)

    async def describe(self, image: ExtractedImage) -> str:
        data_url = f"data:{image.mime};base64,{base64.b64encode(image.data).decode()}"
        body = {
            "model": self._profile.model,
            "max_tokens": 300,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": PROMPT},
                        {"type": "image_url", "image_url": {"url": data_url}},
                    ],
                }
            ],
        }
        url = f"{self._profile.base_url}/chat/completions"
        for attempt in range(_ATTEMPTS):
            try:
                response = await self._http.post(
                    url, json=body, headers=self._headers, timeout=self._profile.timeout_seconds
                )
            except httpx.TransportError as exc:
                log.warning("vision request failed (attempt %d): %r", attempt + 1, exc)
                if attempt + 1 == _ATTEMPTS:
                    raise VisionUnavailable("the vision endpoint did not answer") from exc
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                log.warning(
                    "vision endpoint answered %d (attempt %d)", response.status_code, attempt + 1
                )
                if attempt + 1 == _ATTEMPTS:
                    raise VisionUnavailable(f"the vision endpoint answered {response.status_code}")
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            return self._content(response)
        raise AssertionError("unreachable")

    def _content(self, response: httpx.Response) -> str:
        status = response.status_code
        if status in (401, 403):
            raise errors.DocumentUnreadable(
                "VisionAuthenticationError",
                f"the vision endpoint refused the key (HTTP {status}); check "
                "vision_profile.secret_id, then retry the upload",
            )
        if status >= 400:
            log.warning("vision endpoint refused the request: %d %s", status, response.text[:500])
            raise errors.DocumentUnreadable(
                "VisionRequestError",
                f"the vision endpoint refused the request (HTTP {status}); check that "
                "vision_profile.model exists there and reads images, then retry the upload",
                logged=True,
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise errors.DocumentUnreadable(
                "VisionResponseError",
                "the vision endpoint's answer is not an OpenAI-compatible chat completion; "
                "check vision_profile.base_url, then retry the upload",
            ) from exc
        if isinstance(content, list):  # content parts
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return " ".join(str(content or "").split())
