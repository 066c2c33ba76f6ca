"""Which rows of the reach table apply to a caller (``access.reach``): the decision the
statements of ``knowledge_bases.repository.reachable`` select by. The statements themselves
run against Postgres in ``tests/tenancy``."""

from __future__ import annotations

import pytest
from docproc_common.auth import EDIT, VIEW, Principal
from docproc_upload.access import Access, Reach, reach


@pytest.mark.parametrize(
    ("principal", "access", "expected"),
    [
        pytest.param(
            Principal("ann", "acme", frozenset({VIEW})),
            Access.VIEW,
            Reach("ann", "acme", app=True, grants=("view", "edit")),
            id="a viewer reads its organization's bases and every app base",
        ),
        pytest.param(
            Principal("ann", "acme", frozenset({VIEW})),
            Access.EDIT,
            Reach("ann", None, app=False, grants=("edit",)),
            id="a viewer writes only its own bases and those granted edit",
        ),
        pytest.param(
            Principal("ann", "acme", frozenset({EDIT})),
            Access.EDIT,
            Reach("ann", "acme", app=False, grants=("edit",)),
            id="an editor writes its organization's bases",
        ),
        pytest.param(
            Principal("ann", None, frozenset({VIEW, EDIT})),
            Access.VIEW,
            Reach("ann", None, app=True, grants=("view", "edit")),
            id="no organization, no organization's bases",
        ),
        pytest.param(
            Principal("root", "acme", frozenset(), app_admin=True),
            Access.EDIT,
            Reach("root", None, app=True, grants=("edit",)),
            id="the app admin writes app bases and gains no organization's",
        ),
        pytest.param(
            Principal("root", "acme", frozenset(), app_admin=True),
            Access.VIEW,
            Reach("root", None, app=True, grants=("view", "edit")),
            id="the app admin reads no organization's bases without the permission",
        ),
    ],
)
def test_reach(principal: Principal, access: Access, expected: Reach) -> None:
    assert reach(principal, access) == expected
