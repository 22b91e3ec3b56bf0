"""The REST API for automation (``/api/v1/``) and the Prometheus metrics (``/metrics``).

Crawl engineers script what the web UI does: one module per subject (domains, templates, schedules,
definitions, jobs, qa), each a django-ninja router with typed schemas, gathered in :mod:`.urls` with the
OpenAPI schema at ``/api/v1/openapi.json`` and interactive docs at ``/api/v1/docs``.

Nothing here owns a rule. Reads are the same queries the pages make; every write goes through what the
web UI uses: the edit forms (each wraps the model's ``full_clean``), ``seeding.add_seeds``, the scheduler
(run now, activate, deactivate, set next) and dispatch (control, resubmit, reject), so a refusal reads the
same in the API, the UI and the CLI. Who may call what is webui.access's table (:mod:`.security`): a token
carries its user's roles. Why django-ninja: docs/DESIGN.md, "The REST API and metrics".
"""
