"""Fixtures for the API tests: a token-carrying client per role (the roles are the web UI's groups),
real rows through the real services (tests.webui.conftest's sample), a broker whose queues are emptied."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from orchestrator.api import tokens
from tests.webui.conftest import ROLES, Sample, sample  # noqa: F401 (fixture)

BASE = "/api/v1"


class Api:
    """A test client that sends one user's API token, with JSON in and out."""

    def __init__(self, token: str | None) -> None:
        self.client = Client()
        self.token = token

    def _headers(self) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(BASE + path, params, **self._headers())

    def post(self, path: str, body: Any = None) -> Any:
        return self.client.post(BASE + path, json.dumps(body or {}), content_type="application/json", **self._headers())

    def patch(self, path: str, body: Any) -> Any:
        return self.client.patch(BASE + path, json.dumps(body), content_type="application/json", **self._headers())


def token_for(django_user_model: Any, role: str | None, username: str | None = None) -> str:
    user = django_user_model.objects.create_user(
        username or (role or "nobody").replace(" ", "_"), password="pw-long-enough"
    )
    if role:
        user.groups.add(Group.objects.get(name=role))
    return tokens.create(user, "tests")[1]


@pytest.fixture
def api(db: None, django_user_model: Any) -> dict[str, Api]:
    """One client per role, each with its own user's token."""
    return {role: Api(token_for(django_user_model, role)) for role in ROLES}


@pytest.fixture
def curator(api: dict[str, Api]) -> Api:
    return api["curator"]


@pytest.fixture
def engineer(api: dict[str, Api]) -> Api:
    return api["crawl engineer"]


@pytest.fixture
def viewer(api: dict[str, Api]) -> Api:
    return api["viewer"]


def errors(response: Any) -> list[tuple[list[Any], str]]:
    """A 422's errors as (path, message) pairs."""
    assert response.status_code == 422, (response.status_code, response.content[:500])
    return [(e["loc"], e["msg"]) for e in response.json()["detail"]]


@pytest.fixture
def broker_queues() -> Iterator[None]:
    """Nothing consumes the harvest and control queues here: empty what a test put there."""
    yield
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        if hasattr(channel, "client"):  # Redis: a list per queue
            for key in list(channel.client.scan_iter("control.job-*")) + list(channel.client.scan_iter("harvest.*")):
                channel.client.delete(key)
            return
        folder = Path(channel.data_folder_in)  # the embedded broker: a file per message, named after its queue
        for message in folder.glob("*.msg"):
            queue = message.name.partition(".")[2]
            if queue.startswith(("control.job-", "harvest.")):
                message.unlink(missing_ok=True)
