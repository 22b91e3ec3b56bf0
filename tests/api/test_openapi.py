"""The OpenAPI schema: served at /api/v1/openapi.json, valid OpenAPI 3, naming every route with its
parameters; the interactive docs load."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from openapi_spec_validator import validate

from orchestrator.api.urls import api

pytestmark = pytest.mark.django_db


def test_the_schema_is_valid_and_names_every_route():
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    schema = response.json()
    validate(schema)  # raises on anything that is not valid OpenAPI
    assert schema["info"]["title"] == "netharvest API" and "Bearer" in schema["info"]["description"]
    served = {(method.upper(), path) for path, operations in schema["paths"].items() for method in operations}
    routes = {
        (method, "/api/v1" + path)
        for _, router in api._routers
        for path, view in router.path_operations.items()
        for operation in view.operations
        for method in operation.methods
    }
    assert served == routes and len(routes) >= 30
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("summary"), (method, path)
            assert operation.get("security"), (method, path)  # every operation says how to authenticate
            assert {"401", "403", "422"} <= set(operation["responses"]), (method, path)  # and how it refuses
            for name in re.findall(r"\{(\w+)\}", path):
                assert name in {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}, path
    schemes = schema["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    assert "/api/v1/jobs/{job_id}/control" in schema["paths"] and "/api/v1/definitions" in schema["paths"]


def test_the_interactive_docs_load_from_this_server():
    page = Client().get("/api/v1/docs")
    text = page.content.decode()
    assert page.status_code == 200 and "openapi.json" in text
    scripts = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', text)
    assert scripts and all(s.startswith("/static/ninja/") for s in scripts), scripts  # no CDN: works offline
    assert Client().get(scripts[0]).status_code == 200
