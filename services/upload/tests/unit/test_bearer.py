"""A bearer token verified into its principal (``docproc_upload.bearer``): signed with the
deployment's key, unexpired, ids that fit their columns; kept while it lives."""

import datetime
import time

import jwt
import jwt.api_jwt
import pytest
from docproc_common.auth import mint_token
from docproc_common.errors import Unauthorized
from docproc_common.settings import AuthSettings
from docproc_testing.auth import DEV_AUTH
from docproc_upload import bearer
from docproc_upload.bearer import principal_from_header, verify_token
from pydantic import SecretStr


class TestTokens:
    def test_round_trip(self) -> None:
        settings = DEV_AUTH
        token = mint_token(
            settings, user_id="u", organization_id="o", permissions=["collections:view"]
        )
        p = verify_token(settings, token)
        assert (p.user_id, p.organization_id, p.app_admin) == ("u", "o", False)
        assert p.has("collections:view")
        assert not p.has("collections:edit")

    def test_wrong_key_is_401(self) -> None:
        token = mint_token(AuthSettings(jwt_secret=SecretStr("x" * 40)), user_id="u")
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, token)

    def test_expired_is_401(self) -> None:
        """Expired for longer than the clock skew allowed (``AUTH__LEEWAY_S``)."""
        token = mint_token(DEV_AUTH, user_id="u", ttl_s=-10 - int(DEV_AUTH.leeway_s))
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, token)

    @pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer not-a-jwt"])
    def test_missing_or_malformed_header_is_401(self, header: str | None) -> None:
        with pytest.raises(Unauthorized):
            principal_from_header(DEV_AUTH, header)

    def test_unsigned_token_is_refused(self) -> None:
        import jwt

        token = jwt.encode(
            {"sub": "u", "exp": 9999999999, "app_admin": True}, key=None, algorithm="none"
        )
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, token)

    @pytest.mark.parametrize(
        ("user", "org"),
        [("u" * 201, "o"), ("u", "o" * 201), ("a\x00b", "o"), ("u", "a\x00b"), ("", "o")],
    )
    def test_an_id_no_column_can_store_is_401(self, user: str, org: str) -> None:
        """Signed, but the ids would not fit owner_id/user_id/organization_id: a 401 at the
        door instead of a database error (500) on the first write."""
        token = mint_token(DEV_AUTH, user_id=user, organization_id=org)
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, token)

    def test_an_id_at_the_column_width_is_accepted(self) -> None:
        token = mint_token(DEV_AUTH, user_id="u" * 200, organization_id="o" * 200)
        assert verify_token(DEV_AUTH, token).user_id == "u" * 200

    def test_the_id_limit_is_the_columns_width(self) -> None:
        from docproc_common.auth import MAX_ID_LENGTH
        from docproc_common.db.models import KnowledgeBase, RagDocument

        for column in (
            KnowledgeBase.owner_id,
            KnowledgeBase.organization_id,
            RagDocument.uploaded_by,
            RagDocument.organization_id,
        ):
            assert column.type.length == MAX_ID_LENGTH, column  # type: ignore[attr-defined]


class TestClockSkewAndTimes:
    """``AUTH__LEEWAY_S`` (30 s) of skew between the gateway's clock and ours; the time
    claims are numbers, never strings or booleans PyJWT would turn into one."""

    @staticmethod
    def signed(**claims: object) -> str:
        now = int(time.time())
        return jwt.encode(
            {"sub": "u", "iat": now, "exp": now + 600, **claims}, DEV_AUTH.secret(), "HS256"
        )

    def test_a_default_leeway_of_thirty_seconds(self) -> None:
        assert AuthSettings().leeway_s == 30

    # offsets from the time the test runs, not from collection: a shuffled suite runs a test
    # up to its whole length (40 minutes) after collecting it
    @pytest.mark.parametrize(
        ("claim", "offset"),
        [("exp", -10), ("nbf", 10), ("iat", 10)],
        ids=["exp_just_past", "nbf_just_ahead", "iat_just_ahead"],
    )
    def test_skew_within_the_leeway_is_accepted(self, claim: str, offset: int) -> None:
        token = self.signed(**{claim: int(time.time()) + offset})
        assert verify_token(DEV_AUTH, token).user_id == "u"

    @pytest.mark.parametrize(("claim", "offset"), [("exp", -40), ("nbf", 40)], ids=["exp", "nbf"])
    def test_skew_past_the_leeway_is_401(self, claim: str, offset: int) -> None:
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, self.signed(**{claim: int(time.time()) + offset}))

    def test_no_leeway_when_set_to_zero(self) -> None:
        strict = DEV_AUTH.model_copy(update={"leeway_s": 0})
        with pytest.raises(Unauthorized):
            verify_token(strict, self.signed(exp=int(time.time()) - 10))

    @pytest.mark.parametrize(
        "claims",
        [
            {"exp": "9999999999"},
            {"exp": True},
            {"nbf": "0"},
            {"iat": str(int(time.time()))},
            {"iat": False},
            {"exp": [9999999999]},
        ],
        ids=["exp_string", "exp_bool", "nbf_string", "iat_string", "iat_bool", "exp_list"],
    )
    def test_a_time_that_is_not_a_number_is_401(self, claims: dict[str, object]) -> None:
        with pytest.raises(Unauthorized):
            verify_token(DEV_AUTH, self.signed(**claims))


class TestVerifiedTokens:
    """A verified token's principal is kept for the token's lifetime, and only for it."""

    def test_a_token_is_verified_once_while_it_lives(self, monkeypatch: pytest.MonkeyPatch) -> None:
        settings = DEV_AUTH
        token = mint_token(settings, user_id="once", permissions=["collections:view"])
        decoded: list[str] = []
        real = jwt.decode

        def counting(*args: object, **kwargs: object) -> object:
            decoded.append(str(args[0]))
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(bearer.jwt, "decode", counting)
        first = principal_from_header(settings, f"Bearer {token}")
        again = principal_from_header(settings, f"Bearer {token}")
        assert first == again
        assert again.has("collections:view")
        assert decoded == [token]

    def test_an_expired_token_is_refused_although_it_was_verified(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        settings = DEV_AUTH
        token = mint_token(settings, user_id="late", ttl_s=60)
        assert verify_token(settings, token).user_id == "late"
        later = time.time() + 61 + settings.leeway_s

        class Later(datetime.datetime):
            @classmethod
            def now(cls, tz: datetime.tzinfo | None = None) -> datetime.datetime:
                return cls.fromtimestamp(later, tz)

        monkeypatch.setattr(bearer.time, "time", lambda: later)  # the cache's clock
        monkeypatch.setattr(jwt.api_jwt, "datetime", Later)  # and PyJWT's
        with pytest.raises(Unauthorized):
            verify_token(settings, token)

    def test_another_key_verifies_again(self) -> None:
        token = mint_token(DEV_AUTH, user_id="u")
        assert verify_token(DEV_AUTH, token).user_id == "u"
        with pytest.raises(Unauthorized):
            verify_token(AuthSettings(jwt_secret=SecretStr("y" * 40)), token)
