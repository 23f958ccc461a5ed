"""Fixtures of the arena's tests: an app on a temporary records folder, and a TestClient on it."""

from __future__ import annotations

import pytest
from arena_helpers import LOCAL
from starlette.testclient import TestClient

from agents.arena import create_app


@pytest.fixture
def records(tmp_path):
    return tmp_path / "records"


@pytest.fixture
def client(records):
    with TestClient(create_app(records=str(records), allow_decks=True), base_url=LOCAL) as test_client:
        yield test_client
