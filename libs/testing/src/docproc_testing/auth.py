"""The tests' signing key: the development one, which only ``ENV=dev`` accepts (the tests
ask for it: the repository's ``conftest.py``), as ``docproc dev`` does."""

from __future__ import annotations

from docproc_common.settings import DEV_JWT_SECRET, AuthSettings

#: What a service under ``ENV=dev`` with no ``AUTH__JWT_SECRET`` verifies tokens with.
DEV_AUTH = AuthSettings.model_validate({"jwt_secret": DEV_JWT_SECRET})
