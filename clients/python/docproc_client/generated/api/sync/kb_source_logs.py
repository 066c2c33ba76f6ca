from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_envelope import ErrorEnvelope
from ...models.sync_log_page import SyncLogPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    kb_id: UUID,
    source_id: UUID,
    *,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    authorization: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(authorization, Unset):
        headers["authorization"] = authorization

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["offset"] = offset

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/kb/{kb_id}/sync-sources/{source_id}/logs".format(
            kb_id=quote(str(kb_id), safe=""),
            source_id=quote(str(source_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorEnvelope | SyncLogPage | None:
    if response.status_code == 200:
        response_200 = SyncLogPage.from_dict(response.json())

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
) -> Response[ErrorEnvelope | SyncLogPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    kb_id: UUID,
    source_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | SyncLogPage]:
    """Kb Source Logs

    Args:
        kb_id (UUID):
        source_id (UUID):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | SyncLogPage]
    """

    kwargs = _get_kwargs(
        kb_id=kb_id,
        source_id=source_id,
        limit=limit,
        offset=offset,
        authorization=authorization,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    kb_id: UUID,
    source_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | SyncLogPage | None:
    """Kb Source Logs

    Args:
        kb_id (UUID):
        source_id (UUID):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | SyncLogPage
    """

    return sync_detailed(
        kb_id=kb_id,
        source_id=source_id,
        client=client,
        limit=limit,
        offset=offset,
        authorization=authorization,
    ).parsed


async def asyncio_detailed(
    kb_id: UUID,
    source_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | SyncLogPage]:
    """Kb Source Logs

    Args:
        kb_id (UUID):
        source_id (UUID):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | SyncLogPage]
    """

    kwargs = _get_kwargs(
        kb_id=kb_id,
        source_id=source_id,
        limit=limit,
        offset=offset,
        authorization=authorization,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    kb_id: UUID,
    source_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | SyncLogPage | None:
    """Kb Source Logs

    Args:
        kb_id (UUID):
        source_id (UUID):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | SyncLogPage
    """

    return (
        await asyncio_detailed(
            kb_id=kb_id,
            source_id=source_id,
            client=client,
            limit=limit,
            offset=offset,
            authorization=authorization,
        )
    ).parsed
