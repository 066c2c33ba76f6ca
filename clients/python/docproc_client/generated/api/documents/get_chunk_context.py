from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.chunk_context import ChunkContext
from ...models.error_envelope import ErrorEnvelope
from ...types import UNSET, Response, Unset


def _get_kwargs(
    document_id: UUID,
    *,
    chunk_no: int,
    before: int | Unset = 2,
    after: int | Unset = 2,
    authorization: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(authorization, Unset):
        headers["authorization"] = authorization

    params: dict[str, Any] = {}

    params["chunk_no"] = chunk_no

    params["before"] = before

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/rag/documents/{document_id}/chunks".format(
            document_id=quote(str(document_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChunkContext | ErrorEnvelope | None:
    if response.status_code == 200:
        response_200 = ChunkContext.from_dict(response.json())

        return response_200

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
) -> Response[ChunkContext | ErrorEnvelope]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    document_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    chunk_no: int,
    before: int | Unset = 2,
    after: int | Unset = 2,
    authorization: None | str | Unset = UNSET,
) -> Response[ChunkContext | ErrorEnvelope]:
    """Get Chunk Context

     A chunk of the document and up to ``before``/``after`` chunks around it; 404 until
    the document is ``done``.

    Args:
        document_id (UUID):
        chunk_no (int): A search hit's chunk_no
        before (int | Unset):  Default: 2.
        after (int | Unset):  Default: 2.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkContext | ErrorEnvelope]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        chunk_no=chunk_no,
        before=before,
        after=after,
        authorization=authorization,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    document_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    chunk_no: int,
    before: int | Unset = 2,
    after: int | Unset = 2,
    authorization: None | str | Unset = UNSET,
) -> ChunkContext | ErrorEnvelope | None:
    """Get Chunk Context

     A chunk of the document and up to ``before``/``after`` chunks around it; 404 until
    the document is ``done``.

    Args:
        document_id (UUID):
        chunk_no (int): A search hit's chunk_no
        before (int | Unset):  Default: 2.
        after (int | Unset):  Default: 2.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkContext | ErrorEnvelope
    """

    return sync_detailed(
        document_id=document_id,
        client=client,
        chunk_no=chunk_no,
        before=before,
        after=after,
        authorization=authorization,
    ).parsed


async def asyncio_detailed(
    document_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    chunk_no: int,
    before: int | Unset = 2,
    after: int | Unset = 2,
    authorization: None | str | Unset = UNSET,
) -> Response[ChunkContext | ErrorEnvelope]:
    """Get Chunk Context

     A chunk of the document and up to ``before``/``after`` chunks around it; 404 until
    the document is ``done``.

    Args:
        document_id (UUID):
        chunk_no (int): A search hit's chunk_no
        before (int | Unset):  Default: 2.
        after (int | Unset):  Default: 2.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkContext | ErrorEnvelope]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        chunk_no=chunk_no,
        before=before,
        after=after,
        authorization=authorization,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    document_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    chunk_no: int,
    before: int | Unset = 2,
    after: int | Unset = 2,
    authorization: None | str | Unset = UNSET,
) -> ChunkContext | ErrorEnvelope | None:
    """Get Chunk Context

     A chunk of the document and up to ``before``/``after`` chunks around it; 404 until
    the document is ``done``.

    Args:
        document_id (UUID):
        chunk_no (int): A search hit's chunk_no
        before (int | Unset):  Default: 2.
        after (int | Unset):  Default: 2.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkContext | ErrorEnvelope
    """

    return (
        await asyncio_detailed(
            document_id=document_id,
            client=client,
            chunk_no=chunk_no,
            before=before,
            after=after,
            authorization=authorization,
        )
    ).parsed
