"""The API under /api/v1/: its routers, the OpenAPI schema (/api/v1/openapi.json) and docs (/api/v1/docs)."""

from typing import Any

from ninja import NinjaAPI

from orchestrator.api import definitions, domains, errors, jobs, qa, schedules, templates
from orchestrator.api.security import role
from webui.access import ENGINEER

DESCRIPTION = """\
netharvest's REST API for automation: what the web UI does, for scripts. Authenticate with a token
(`netharvest tokens create USER`, or the admin's API tokens page) sent as `Authorization: Bearer nh_…`;
a token has its user's roles (viewer reads; curator edits domains, seeds, schedules and definitions and runs
harvests; crawl engineer edits templates and controls jobs). Times are UTC. Lists are pages: `limit` and
`offset` (at most 1000 a page), `count` is the total; domains are keyset pages (`after`). Errors:
`{"detail": …}`; bad input is 422 with the path of each bad value. See docs/API.md.
"""

#: The answers every operation may give besides its own (orchestrator/api/errors.py says when).
ERRORS = {
    401: "No token, or an unknown or revoked one (or the user is deactivated).",
    403: "The token's user lacks the role this operation needs.",
    404: "No such object.",
    409: "The object's state does not allow this (the scheduler's or dispatch's refusal, in `detail`).",
    422: "Bad input: `detail` lists each bad value's path (`loc`) and why (`msg`).",
}
ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "detail": {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                            "msg": {"type": "string"},
                            "type": {"type": "string"},
                        },
                    },
                },
            ]
        }
    },
    "required": ["detail"],
}


class Api(NinjaAPI):
    """NinjaAPI whose schema also documents the error answers of every operation, in their one shape."""

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        schema.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
        for operations in schema["paths"].values():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                for status, text in ERRORS.items():
                    responses.setdefault(
                        status,
                        {
                            "description": text,
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                        },
                    )
        return schema


#: Each operation names its role (tests/api/test_auth.py checks it); the default is the strictest.
api = Api(
    title="netharvest API",
    version="1",
    description=DESCRIPTION,
    auth=role(ENGINEER),
    urls_namespace="api",
    docs_url="/docs",
)
errors.install(api)
for module in (domains, templates, schedules, definitions, jobs, qa):
    api.add_router("/", module.router)
