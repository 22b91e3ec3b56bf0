"""Django settings: the orchestrator's one source of defaults, every value overridable from the environment.

Unset ``NETHARVEST_DATABASE_URL`` means the embedded SQLite database in the data directory; unset
``NETHARVEST_BROKER_URL`` means the embedded filesystem broker there too (harvester.runtime), so a
newcomer's machine runs the same code paths as production with nothing but Python installed.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

import dj_database_url

from harvester.runtime import broker_transport_options, data_dir, embedded_database
from orchestrator import services
from orchestrator.security import refuse_placeholder_key

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = data_dir()
DATA_DIR.mkdir(parents=True, exist_ok=True)
broker_transport_options()  # the embedded broker's folders, now that the data directory is there


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def _secret_key() -> str:
    """From the environment in production (a placeholder is refused, and the web server refuses to start
    without one: orchestrator/security.py); otherwise made once and kept in the data directory."""
    refuse_placeholder_key(os.environ.get("NETHARVEST_SECRET_KEY"))
    if os.environ.get("NETHARVEST_SECRET_KEY", "").strip():
        return os.environ["NETHARVEST_SECRET_KEY"].strip()
    path = DATA_DIR / "secret_key"
    if not path.exists():
        # Processes starting together on a fresh data directory (netharvest up) must agree on one key: each
        # writes its own temporary file (mode 0600) and links it to the name; the first link wins.
        fd, tmp = tempfile.mkstemp(prefix=".secret_key.", dir=DATA_DIR)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(50))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _env_bool("NETHARVEST_DEBUG", False)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("NETHARVEST_ALLOWED_HOSTS", "localhost,127.0.0.1").split(",")]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("NETHARVEST_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

# --- HTTPS behind a reverse proxy (README, "Production"): off by default, so the embedded default works
# over plain http://127.0.0.1; `netharvest check --deploy` is clean with all of them set.
#: The header the TLS-terminating proxy sets to "https" (e.g. X-Forwarded-Proto); empty = no proxy.
_proxy_header = os.environ.get("NETHARVEST_PROXY_SSL_HEADER", "").strip()
if _proxy_header:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https")
#: Cookies only over HTTPS (session and CSRF).
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _env_bool("NETHARVEST_SECURE_COOKIES", False)
#: Redirect plain HTTP requests to HTTPS.
SECURE_SSL_REDIRECT = _env_bool("NETHARVEST_SSL_REDIRECT", False)
#: Strict-Transport-Security max-age (0 = no header); then whether it covers subdomains and asks for preload.
SECURE_HSTS_SECONDS = int(os.environ.get("NETHARVEST_HSTS_SECONDS", 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("NETHARVEST_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = _env_bool("NETHARVEST_HSTS_PRELOAD", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_celery_beat",
    "ninja",  # the API docs page (/api/v1/docs) serves its Swagger UI from here, not from a CDN
    "orchestrator.harvest",
    "orchestrator.selection",
    "orchestrator.api",
    "webui",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webui.middleware.RefuseControlCharacters",  # after auth and messages: its error page has the layout
]

ROOT_URLCONF = "orchestrator.urls"
WSGI_APPLICATION = "orchestrator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "webui" / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "webui.jinja.environment"},
    },
    {
        # The admin's own templates are Django templates.
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    },
]

_SQLITE_URL = f"sqlite:///{embedded_database()}"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("NETHARVEST_DATABASE_URL", "").strip() or _SQLITE_URL, conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes share the embedded database: WAL lets readers run beside one writer, and
    # IMMEDIATE transactions take the write lock up front instead of failing half-way.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise serves from the app directories; this keeps it quiet
WHITENOISE_USE_FINDERS = True
LOGIN_URL = "webui:login"  # the web UI's own login page
LOGIN_REDIRECT_URL = "webui:home"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("NETHARVEST_LOG_LEVEL", "INFO")},
}

# --- netharvest's own settings (orchestrator side) ---------------------------------------------
#: Where finished WARCs, indexes and the dedup index live.
NETHARVEST_ARCHIVE_DIR = Path(os.environ.get("NETHARVEST_ARCHIVE_DIR", DATA_DIR / "archive"))
NETHARVEST_INDEX_DIR = Path(os.environ.get("NETHARVEST_INDEX_DIR", DATA_DIR / "index"))
#: How often beat looks for due harvests.
NETHARVEST_SCHEDULER_INTERVAL_S = float(os.environ.get("NETHARVEST_SCHEDULER_INTERVAL_S", 30))
#: The reaper (orchestrator/harvest/jobs/reaper.py; docs/DESIGN.md, "Reliability: broker outages, fencing, dead
#: workers"): it sweeps every REAPER_INTERVAL_S (beat; read by orchestrator.celery before Django is set up)
#: and fails a STARTED job silent for HEARTBEAT_TIMEOUT_S, so a dead worker is noticed in 60-75 s. A sweep
#: coming more than BLIND_GAP_S after the previous one means the orchestrator could not hear (broker, beat or
#: events worker down): silence is then counted from that sweep on, so a broker outage never reaps a live
#: job. Keep HEARTBEAT_TIMEOUT_S > BLIND_GAP_S + harvester.defaults.BROKER_RETRY_MAX_S + PROGRESS_INTERVAL_S
#: (60 > 30 + 5 + 5) and BLIND_GAP_S well above REAPER_INTERVAL_S.
NETHARVEST_REAPER_INTERVAL_S = float(os.environ.get("NETHARVEST_REAPER_INTERVAL_S", 15))
NETHARVEST_HEARTBEAT_TIMEOUT_S = int(os.environ.get("NETHARVEST_HEARTBEAT_TIMEOUT_S", 60))
NETHARVEST_BLIND_GAP_S = int(os.environ.get("NETHARVEST_BLIND_GAP_S", 30))
NETHARVEST_SUBMITTED_TIMEOUT_S = int(os.environ.get("NETHARVEST_SUBMITTED_TIMEOUT_S", 7 * 24 * 3600))
#: A job reaped as ``heartbeat-lost`` (its worker or machine died) is resubmitted by the reaper itself, so a
#: restarted worker or stack carries on without an operator: at most this many times in a row for one line of
#: jobs (a job that kills its harvester each time then stays FAILED for an operator). 0: never, as before.
NETHARVEST_AUTO_RESUBMIT = int(os.environ.get("NETHARVEST_AUTO_RESUBMIT", 2))
#: At most this many domain configurations in one job (NetarchiveSuite: configChunkSize).
NETHARVEST_MAX_CONFIGS_PER_JOB = int(os.environ.get("NETHARVEST_MAX_CONFIGS_PER_JOB", 10000))
#: The template a new domain's default configuration uses.
NETHARVEST_DEFAULT_TEMPLATE = os.environ.get("NETHARVEST_DEFAULT_TEMPLATE", "default")

# --- indexer chain: storage locations and indexes (orchestrator/harvest/chain/storage.py reads these) -------
#: Where the chain stores WARCs: ``name=/path`` pairs, comma-separated; the transfer step picks the one with
#: the most free space. Default: one location, ``archive``, in the archive directory.
NETHARVEST_STORAGE_LOCATIONS = (
    os.environ.get("NETHARVEST_STORAGE_LOCATIONS", "").strip() or f"archive={NETHARVEST_ARCHIVE_DIR}"
)
#: An optional replica location (``name=/path`` or a bare path, named ``backup``); unset = no backup step.
NETHARVEST_BACKUP_LOCATION = os.environ.get("NETHARVEST_BACKUP_LOCATION", "").strip()
#: The dedup index the chain feeds and every new job's JobSpec names.
NETHARVEST_DEDUP_INDEX = Path(os.environ.get("NETHARVEST_DEDUP_INDEX", NETHARVEST_INDEX_DIR / "dedup.sqlite3"))
#: The dedup service (indexer/dedupservice.py, ``http://host:port``): when set, the chain feeds it and every new
#: job's JobSpec names it instead of the file above, so harvesters on any machine share it. `netharvest up` sets
#: it to the service it starts, and records it in the data directory (orchestrator/services.py), so a command run
#: from another shell (`netharvest harvests run-now`) names the same service when its environment does not.
NETHARVEST_DEDUP_URL = services.setting("NETHARVEST_DEDUP_URL", DATA_DIR, "")
#: The lease on one file's step: a live worker renews it every quarter lease while the step runs, so a killed
#: worker's file is free again within a lease and the sweep (every minute) queues it again.
NETHARVEST_INDEX_LEASE_S = float(os.environ.get("NETHARVEST_INDEX_LEASE_S", 120))
#: A file queued this long ago and never claimed (its message lost) is queued again by the sweep.
NETHARVEST_INDEX_REQUEUE_S = int(os.environ.get("NETHARVEST_INDEX_REQUEUE_S", 30 * 60))
#: How often the sweep retries a FAILED file on its own (``netharvest index run`` always retries).
NETHARVEST_INDEX_AUTO_RETRIES = int(os.environ.get("NETHARVEST_INDEX_AUTO_RETRIES", 3))
# --- replay (pywb behind the web UI: deploy/replay_server.py, webui/views/replay.py) -------------------
#: Where the web UI reaches the replay service (loopback or an internal network: never published to users).
#: Unset: the one `netharvest up` recorded in the data directory (its --replay-bind), else the default.
NETHARVEST_REPLAY_URL = services.setting("NETHARVEST_REPLAY_URL", DATA_DIR, "http://127.0.0.1:8090")
#: Seconds the web UI waits for a block of the replay service's answer.
NETHARVEST_REPLAY_TIMEOUT_S = float(os.environ.get("NETHARVEST_REPLAY_TIMEOUT_S", 60))
# --- page QA (orchestrator/harvest/qa/pageqa.py): replayed pages checked in headless Chromium -------------
#: Pages a QA pass loads per job besides its seeds (the seeds always are).
NETHARVEST_QA_MAX_PAGES = int(os.environ.get("NETHARVEST_QA_MAX_PAGES", 20))
#: Seconds a page may take to load (replay or live) before it is cut and reported as hanging.
NETHARVEST_QA_PAGE_TIMEOUT_S = float(os.environ.get("NETHARVEST_QA_PAGE_TIMEOUT_S", 30))
#: Also load each page from the live web and score the replay against it (0: replay only, e.g. no internet).
NETHARVEST_QA_LIVE = os.environ.get("NETHARVEST_QA_LIVE", "1").strip() not in ("0", "false", "no", "")
#: Where the QA screenshots' thumbnails are kept (shared by the QA worker and the web UI).
NETHARVEST_QA_DIR = Path(os.environ.get("NETHARVEST_QA_DIR", DATA_DIR / "qa"))
#: The browser the QA pass drives (Debian's chromium; Playwright downloads none).
NETHARVEST_QA_CHROMIUM = os.environ.get("NETHARVEST_QA_CHROMIUM", "/usr/bin/chromium")
#: A pass still RUNNING after this long lost its worker: it may be claimed and run again.
NETHARVEST_QA_STALE_S = int(os.environ.get("NETHARVEST_QA_STALE_S", 3 * 3600))
# --- selection tool (orchestrator/selection) ---------------------------------------------------
#: Nameservers (IP[:PORT], comma-separated) for the online check of a new record's URL; empty = the
#: system's. Seconds each step of that check may take.
NETHARVEST_SELECTION_NAMESERVERS = os.environ.get("NETHARVEST_SELECTION_NAMESERVERS", "")
NETHARVEST_SELECTION_CHECK_TIMEOUT = float(os.environ.get("NETHARVEST_SELECTION_CHECK_TIMEOUT", 10))
# --- REST API and metrics (orchestrator/api; docs/API.md) ------------------------------------------
#: Dispatch by reference (issue 15; orchestrator/harvest/jobs/dispatch.py): the base URL at which harvesters reach
#: this orchestrator's API (e.g. ``http://orchestrator:8000``). Set, a job message carries only the job's id and
#: ``<this>/api/v1/jobs/<id>/spec``, which the harvester reads with its NETHARVEST_API_TOKEN; empty, the whole
#: JobSpec travels in the message (a single machine without the web process, the test stacks).
NETHARVEST_SPEC_BASE_URL = os.environ.get("NETHARVEST_SPEC_BASE_URL", "").strip().rstrip("/")
#: API list pages: ``limit`` at most this many items (django-ninja's pagination reads these names).
NINJA_PAGINATION_PER_PAGE = 100
NINJA_PAGINATION_MAX_LIMIT = 1000
#: Who may read /metrics without a token: client addresses (IP or CIDR, comma-separated) of requests that
#: came straight to this server (a request a proxy forwarded always needs a token). Empty = a token always.
NETHARVEST_METRICS_ALLOW = os.environ.get("NETHARVEST_METRICS_ALLOW", "127.0.0.1,::1")
