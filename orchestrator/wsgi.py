"""WSGI entry point for gunicorn: ``gunicorn orchestrator.wsgi``. It refuses to serve with an unsafe
configuration (orchestrator/security.py): gunicorn's workers then fail to boot, and gunicorn exits
with the reason in its log."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.settings")
application = get_wsgi_application()

from orchestrator.security import refuse_unsafe_web_start  # noqa: E402 - after Django is set up

refuse_unsafe_web_start()
