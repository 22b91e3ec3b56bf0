"""The API under /api/v1/: its routers, the OpenAPI schema (/api/v1/openapi.json) and docs (/api/v1/docs)."""

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

#: Each operation names its role (tests/api/test_auth.py checks it); the default is the strictest.
api = NinjaAPI(title="netharvest API", version="1", description=DESCRIPTION, auth=role(ENGINEER), urls_namespace="api",
               docs_url="/docs")
errors.install(api)
for module in (domains, templates, schedules, definitions, jobs, qa):
    api.add_router("/", module.router)
