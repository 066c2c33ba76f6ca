from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_envelope import ErrorEnvelope
from ...models.render_out import RenderOut
from ...models.render_request import RenderRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: RenderRequest,
    dry_run: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(authorization, Unset):
        headers["authorization"] = authorization

    params: dict[str, Any] = {}

    params["dry_run"] = dry_run

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/files/render",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorEnvelope | RenderOut | None:
    if response.status_code == 200:
        response_200 = RenderOut.from_dict(response.json())

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
) -> Response[ErrorEnvelope | RenderOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: RenderRequest,
    dry_run: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | RenderOut]:
    """Render Chat Files

     Route the caller's files for one agent's turn: inline parts or workspace references.

    Two short units around the rendering's storage I/O: the files read, then (unless a dry
    run) the render rows written.

    Args:
        dry_run (bool | Unset): Answer the parts and references, write nothing (input guardrail)
            Default: False.
        authorization (None | str | Unset):
        body (RenderRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | RenderOut]
    """

    kwargs = _get_kwargs(
        body=body,
        dry_run=dry_run,
        authorization=authorization,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: RenderRequest,
    dry_run: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | RenderOut | None:
    """Render Chat Files

     Route the caller's files for one agent's turn: inline parts or workspace references.

    Two short units around the rendering's storage I/O: the files read, then (unless a dry
    run) the render rows written.

    Args:
        dry_run (bool | Unset): Answer the parts and references, write nothing (input guardrail)
            Default: False.
        authorization (None | str | Unset):
        body (RenderRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | RenderOut
    """

    return sync_detailed(
        client=client,
        body=body,
        dry_run=dry_run,
        authorization=authorization,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: RenderRequest,
    dry_run: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | RenderOut]:
    """Render Chat Files

     Route the caller's files for one agent's turn: inline parts or workspace references.

    Two short units around the rendering's storage I/O: the files read, then (unless a dry
    run) the render rows written.

    Args:
        dry_run (bool | Unset): Answer the parts and references, write nothing (input guardrail)
            Default: False.
        authorization (None | str | Unset):
        body (RenderRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | RenderOut]
    """

    kwargs = _get_kwargs(
        body=body,
        dry_run=dry_run,
        authorization=authorization,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: RenderRequest,
    dry_run: bool | Unset = False,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | RenderOut | None:
    """Render Chat Files

     Route the caller's files for one agent's turn: inline parts or workspace references.

    Two short units around the rendering's storage I/O: the files read, then (unless a dry
    run) the render rows written.

    Args:
        dry_run (bool | Unset): Answer the parts and references, write nothing (input guardrail)
            Default: False.
        authorization (None | str | Unset):
        body (RenderRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | RenderOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            dry_run=dry_run,
            authorization=authorization,
        )
    ).parsed
