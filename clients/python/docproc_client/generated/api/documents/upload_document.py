from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_envelope import ErrorEnvelope
from ...models.rag_ingest_response import RAGIngestResponse
from ...models.upload_document_body import UploadDocumentBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    kb_id: UUID,
    *,
    body: UploadDocumentBody,
    replace: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(authorization, Unset):
        headers["authorization"] = authorization

    params: dict[str, Any] = {}

    params["replace"] = replace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/kb/{kb_id}/documents".format(
            kb_id=quote(str(kb_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["files"] = body.to_multipart()

    headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorEnvelope | RAGIngestResponse | None:
    if response.status_code == 202:
        response_202 = RAGIngestResponse.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = ErrorEnvelope.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorEnvelope.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorEnvelope.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorEnvelope.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorEnvelope.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorEnvelope.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ErrorEnvelope.from_dict(response.json())

        return response_422

    if response.status_code == 503:
        response_503 = ErrorEnvelope.from_dict(response.json())

        return response_503

    if response.status_code == 507:
        response_507 = ErrorEnvelope.from_dict(response.json())

        return response_507

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorEnvelope | RAGIngestResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    kb_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: UploadDocumentBody,
    replace: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | RAGIngestResponse]:
    """Upload Document

     Upload one document (multipart ``file``; optional ``ingestion`` JSON,
    ``organizational_unit`` and ``document_date``).

    Args:
        kb_id (UUID):
        replace (bool | Unset): Once indexed, the new document retires the base's earlier
            documents of the same file name (their chunks stay searchable until then) Default: False.
        authorization (None | str | Unset):
        body (UploadDocumentBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | RAGIngestResponse]
    """

    kwargs = _get_kwargs(
        kb_id=kb_id,
        body=body,
        replace=replace,
        authorization=authorization,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    kb_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: UploadDocumentBody,
    replace: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | RAGIngestResponse | None:
    """Upload Document

     Upload one document (multipart ``file``; optional ``ingestion`` JSON,
    ``organizational_unit`` and ``document_date``).

    Args:
        kb_id (UUID):
        replace (bool | Unset): Once indexed, the new document retires the base's earlier
            documents of the same file name (their chunks stay searchable until then) Default: False.
        authorization (None | str | Unset):
        body (UploadDocumentBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | RAGIngestResponse
    """

    return sync_detailed(
        kb_id=kb_id,
        client=client,
        body=body,
        replace=replace,
        authorization=authorization,
    ).parsed


async def asyncio_detailed(
    kb_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: UploadDocumentBody,
    replace: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | RAGIngestResponse]:
    """Upload Document

     Upload one document (multipart ``file``; optional ``ingestion`` JSON,
    ``organizational_unit`` and ``document_date``).

    Args:
        kb_id (UUID):
        replace (bool | Unset): Once indexed, the new document retires the base's earlier
            documents of the same file name (their chunks stay searchable until then) Default: False.
        authorization (None | str | Unset):
        body (UploadDocumentBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | RAGIngestResponse]
    """

    kwargs = _get_kwargs(
        kb_id=kb_id,
        body=body,
        replace=replace,
        authorization=authorization,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    kb_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: UploadDocumentBody,
    replace: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | RAGIngestResponse | None:
    """Upload Document

     Upload one document (multipart ``file``; optional ``ingestion`` JSON,
    ``organizational_unit`` and ``document_date``).

    Args:
        kb_id (UUID):
        replace (bool | Unset): Once indexed, the new document retires the base's earlier
            documents of the same file name (their chunks stay searchable until then) Default: False.
        authorization (None | str | Unset):
        body (UploadDocumentBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | RAGIngestResponse
    """

    return (
        await asyncio_detailed(
            kb_id=kb_id,
            client=client,
            body=body,
            replace=replace,
            authorization=authorization,
        )
    ).parsed
