from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_envelope import ErrorEnvelope
from ...models.message_attachments_out import MessageAttachmentsOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    message_id: UUID,
    *,
    agent_id: None | str | Unset = UNSET,
    conversation_id: None | str | Unset = UNSET,
    authorization: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(authorization, Unset):
        headers["authorization"] = authorization

    params: dict[str, Any] = {}

    json_agent_id: None | str | Unset
    if isinstance(agent_id, Unset):
        json_agent_id = UNSET
    else:
        json_agent_id = agent_id
    params["agent_id"] = json_agent_id

    json_conversation_id: None | str | Unset
    if isinstance(conversation_id, Unset):
        json_conversation_id = UNSET
    else:
        json_conversation_id = conversation_id
    params["conversation_id"] = json_conversation_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/messages/{message_id}/attachments".format(
            message_id=quote(str(message_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorEnvelope | MessageAttachmentsOut | None:
    if response.status_code == 200:
        response_200 = MessageAttachmentsOut.from_dict(response.json())

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
) -> Response[ErrorEnvelope | MessageAttachmentsOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    message_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    agent_id: None | str | Unset = UNSET,
    conversation_id: None | str | Unset = UNSET,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | MessageAttachmentsOut]:
    """Message Attachments

     The caller's files on a message with what each added to the prompt (history replay).

    Args:
        message_id (UUID):
        agent_id (None | str | Unset):
        conversation_id (None | str | Unset):
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | MessageAttachmentsOut]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        agent_id=agent_id,
        conversation_id=conversation_id,
        authorization=authorization,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    message_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    agent_id: None | str | Unset = UNSET,
    conversation_id: None | str | Unset = UNSET,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | MessageAttachmentsOut | None:
    """Message Attachments

     The caller's files on a message with what each added to the prompt (history replay).

    Args:
        message_id (UUID):
        agent_id (None | str | Unset):
        conversation_id (None | str | Unset):
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | MessageAttachmentsOut
    """

    return sync_detailed(
        message_id=message_id,
        client=client,
        agent_id=agent_id,
        conversation_id=conversation_id,
        authorization=authorization,
    ).parsed


async def asyncio_detailed(
    message_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    agent_id: None | str | Unset = UNSET,
    conversation_id: None | str | Unset = UNSET,
    authorization: None | str | Unset = UNSET,
) -> Response[ErrorEnvelope | MessageAttachmentsOut]:
    """Message Attachments

     The caller's files on a message with what each added to the prompt (history replay).

    Args:
        message_id (UUID):
        agent_id (None | str | Unset):
        conversation_id (None | str | Unset):
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorEnvelope | MessageAttachmentsOut]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        agent_id=agent_id,
        conversation_id=conversation_id,
        authorization=authorization,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    message_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    agent_id: None | str | Unset = UNSET,
    conversation_id: None | str | Unset = UNSET,
    authorization: None | str | Unset = UNSET,
) -> ErrorEnvelope | MessageAttachmentsOut | None:
    """Message Attachments

     The caller's files on a message with what each added to the prompt (history replay).

    Args:
        message_id (UUID):
        agent_id (None | str | Unset):
        conversation_id (None | str | Unset):
        authorization (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorEnvelope | MessageAttachmentsOut
    """

    return (
        await asyncio_detailed(
            message_id=message_id,
            client=client,
            agent_id=agent_id,
            conversation_id=conversation_id,
            authorization=authorization,
        )
    ).parsed
