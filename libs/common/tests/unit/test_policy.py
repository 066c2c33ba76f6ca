import uuid

import pytest
from docproc_common.bus.delivery import Delivery, Subscription
from docproc_common.bus.policy import (
    DlqGuard,
    DlqLimitExceededError,
    Outcome,
    RetryPolicy,
    handle_with_retries,
)
from docproc_common.errors import PermanentError, RetryLater
from docproc_common.events import CollectionDeleted

FAST = RetryPolicy(in_place_retries=2, backoff_s=0, delay_s=0, max_attempts=3)
PAYLOAD = {"teardown_id": str(uuid.uuid4()), "collection_name": "c"}


def delivery(attempt: int = 1) -> Delivery:
    return Delivery("svc", CollectionDeleted.TOPIC, uuid.uuid4(), attempt)


class TestHandleWithRetries:
    async def test_ok(self) -> None:
        seen: list[object] = []

        async def handler(event: object, _d: Delivery) -> None:
            seen.append(event)

        result = await handle_with_retries(
            Subscription(CollectionDeleted.TOPIC, handler), PAYLOAD, delivery(), FAST
        )
        assert result.outcome is Outcome.OK
        assert isinstance(seen[0], CollectionDeleted)

    async def test_transient_failure_is_retried_in_place_then_handed_back(self) -> None:
        calls = 0

        async def handler(_e: object, _d: Delivery) -> None:
            nonlocal calls
            calls += 1
            raise TimeoutError

        result = await handle_with_retries(
            Subscription(CollectionDeleted.TOPIC, handler), PAYLOAD, delivery(), FAST
        )
        assert calls == 3
        assert result.outcome is Outcome.RETRY

    async def test_retry_later_is_handed_back_at_once_then_dead_lettered(self) -> None:
        calls = 0

        async def handler(_e: object, _d: Delivery) -> None:
            nonlocal calls
            calls += 1
            raise RetryLater("the parse child died")

        sub = Subscription(CollectionDeleted.TOPIC, handler)
        assert (await handle_with_retries(sub, PAYLOAD, delivery(), FAST)).outcome is Outcome.RETRY
        assert calls == 1  # not in place
        last = await handle_with_retries(sub, PAYLOAD, delivery(attempt=3), FAST)
        assert last.outcome is Outcome.DLQ and isinstance(last.error, RetryLater)
        assert calls == 2

    async def test_recovers_within_in_place_retries(self) -> None:
        calls = 0

        async def handler(_e: object, _d: Delivery) -> None:
            nonlocal calls
            calls += 1
            if calls < 2:
                raise ConnectionError

        result = await handle_with_retries(
            Subscription(CollectionDeleted.TOPIC, handler), PAYLOAD, delivery(), FAST
        )
        assert result.outcome is Outcome.OK

    async def test_last_attempt_goes_to_dlq(self) -> None:
        async def handler(_e: object, _d: Delivery) -> None:
            raise TimeoutError

        sub = Subscription(CollectionDeleted.TOPIC, handler)
        assert (
            await handle_with_retries(sub, PAYLOAD, delivery(attempt=3), FAST)
        ).outcome is Outcome.DLQ

    async def test_permanent_error_and_bad_payload_go_to_dlq_at_once(self) -> None:
        calls = 0

        async def handler(_e: object, _d: Delivery) -> None:
            nonlocal calls
            calls += 1
            raise PermanentError("never")

        sub = Subscription(CollectionDeleted.TOPIC, handler)
        assert (await handle_with_retries(sub, PAYLOAD, delivery(), FAST)).outcome is Outcome.DLQ
        assert calls == 1
        assert (
            await handle_with_retries(sub, {"nope": 1}, delivery(), FAST)
        ).outcome is Outcome.DLQ
        assert (
            await handle_with_retries(sub, b"not json", delivery(), FAST)
        ).outcome is Outcome.DLQ


class TestGiveUp:
    """Before a decoded event is dead-lettered, its stage records the failure."""

    async def test_called_once_with_the_last_error_when_attempts_are_spent(self) -> None:
        given: list[tuple[object, int, BaseException]] = []

        async def handler(_e: object, _d: Delivery) -> None:
            raise TimeoutError("slow")

        async def give_up(event: object, d: Delivery, error: BaseException) -> None:
            given.append((event, d.attempt, error))

        sub = Subscription(CollectionDeleted.TOPIC, handler, give_up=give_up)
        assert (await handle_with_retries(sub, PAYLOAD, delivery(2), FAST)).outcome is Outcome.RETRY
        assert given == []  # attempts left: nothing to record yet
        result = await handle_with_retries(sub, PAYLOAD, delivery(3), FAST)
        assert result.outcome is Outcome.DLQ
        [(event, attempt, error)] = given
        assert isinstance(event, CollectionDeleted)
        assert attempt == 3
        assert isinstance(error, TimeoutError)
        assert result.error is error

    async def test_called_for_a_permanent_error_but_not_for_an_undecodable_payload(self) -> None:
        given: list[BaseException] = []

        async def handler(_e: object, _d: Delivery) -> None:
            raise PermanentError("never")

        async def give_up(_e: object, _d: Delivery, error: BaseException) -> None:
            given.append(error)

        sub = Subscription(CollectionDeleted.TOPIC, handler, give_up=give_up)
        assert (await handle_with_retries(sub, PAYLOAD, delivery(), FAST)).outcome is Outcome.DLQ
        assert (await handle_with_retries(sub, b"junk", delivery(), FAST)).outcome is Outcome.DLQ
        assert [str(e) for e in given] == ["never"]

    async def test_a_failure_to_record_retries_the_event_instead_of_dead_lettering_it(
        self,
    ) -> None:
        async def handler(_e: object, _d: Delivery) -> None:
            raise TimeoutError

        async def give_up(_e: object, _d: Delivery, _error: BaseException) -> None:
            raise ConnectionError("database down")

        sub = Subscription(CollectionDeleted.TOPIC, handler, give_up=give_up)
        result = await handle_with_retries(sub, PAYLOAD, delivery(3), FAST)
        assert result.outcome is Outcome.RETRY
        assert isinstance(result.error, ConnectionError)


class TestDlqGuard:
    def test_stops_a_consumer_dead_lettering_everything(self) -> None:
        guard = DlqGuard(max_ratio=0.5, window=4)
        guard.record(Outcome.DLQ)
        guard.record(Outcome.DLQ)
        guard.record(Outcome.OK)
        with pytest.raises(DlqLimitExceededError):
            guard.record(Outcome.DLQ)

    def test_an_occasional_dlq_is_fine(self) -> None:
        guard = DlqGuard(max_ratio=0.5, window=4)
        for outcome in [Outcome.DLQ, Outcome.OK, Outcome.OK, Outcome.OK, Outcome.DLQ, Outcome.OK]:
            guard.record(outcome)
