"""The ``netharvest`` console script: netharvest's management commands, with help a crawl engineer reads.

``netharvest import-domains FILE`` runs the Django management command ``import_domains``: dashes and
underscores are the same in command names. Every Django command is still there
(``netharvest help --all`` lists them).
"""

from __future__ import annotations

import os
import sys

OVERVIEW = """\
usage: netharvest COMMAND [options]      (netharvest COMMAND --help for a command's options)

netharvest: web-archiving crawl orchestration (domains, harvest definitions, jobs, WARC, CDX).

Running the stack
  up                  start web, beat, the harvester workers (high, low, continuous), the indexer, the dedup
                      service, replay and page QA (needs Chromium) on this machine (Ctrl-C stops all)
  migrate             create or upgrade the database tables
  createsuperuser     add an administrator account

Domains and harvests
  import-domains FILE bulk-load domains, one per line (invalid lines reported by line number)
  preload --source NAME=FILE …
                      prepare a broad crawl: merge sources, DNS check, redirect discovery, load (resumable)
  selection-transfer  transfer the selection's records (web UI /selection/) into their harvest definitions
  channels            list or create harvest channels (a channel is a queue served by its workers)
  harvests            list, show, run-now, activate, deactivate harvest definitions; set-next moves a run;
                      create NAME --seeds FILE --template NAME [--schedule NAME] [--max-objects N] [--activate];
                      add-seeds NAME --seeds FILE
  jobs                list, show, resubmit, reject, stop, pause, resume jobs; add-trap to a running job;
                      qa JOB (page QA through replay), patch JOB (fetch what the latest QA pass found missing)
  job-stats [JOB…]    compute the QA statistics of ended jobs that lack them (--retry-reports: retry those
                      whose reports could not be read)

Automation
  tokens              create USER | list | revoke: API tokens for the REST API (/api/v1/, docs/API.md)
                      and /metrics; a token acts with its user's roles

Crawling
  crawl               a trial crawl of a template on a site, no database or broker needed:
                      netharvest crawl --seeds FILE --template default --out DIR

Indexing and storage
  index status        files per chain state and per storage location, failures with their errors
  index run           do every pending chain step now (ingest, CDX, transfer, backup, delete); retries failures
  index reindex FILE  rewrite one WARC's CDX and dedup entries from its stored copy
  index dedup-load    load the SQLite dedup index into the dedup service (NETHARVEST_DEDUP_URL)
  index merge [--big] merge newly indexed files into a daily file; --big: then into the master CDX and PATH
  index verify        re-hash stored copies, report missing/corrupt ones per location (exit 1 if any);
                      --repair restores them from a good copy
  index cdx WARC...   print the sorted CDX of WARC files, no database needed (--cdxj for pywb's CDXJ)

Environment
  NETHARVEST_DATA_DIR      data directory (embedded database and broker, spool, archive, index); ./var
  NETHARVEST_DATABASE_URL  e.g. postgres://postgres@127.0.0.1:5432/netharvest; unset = embedded SQLite
  NETHARVEST_BROKER_URL    e.g. redis://127.0.0.1:6379/0; unset = embedded filesystem broker

netharvest help --all lists every command, including Django's own.
"""


def main(argv: list[str] | None = None) -> None:
    from harvester.runtime import ConfigError, broker_url

    try:
        broker_url()  # a broker variable that would split the stack: refused before anything starts
        _main(argv)
        sys.stdout.flush()  # here, not at exit, where a reader gone away would be an "Exception ignored"
    except ConfigError as error:
        sys.exit(f"netharvest: {error}")
    except BrokenPipeError:
        # The reader of the output went away (`netharvest jobs list | head -1`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit must not fail again
        sys.exit(128 + 13)  # as if killed by SIGPIPE


def _main(argv: list[str] | None) -> None:
    argv = list(sys.argv if argv is None else argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.settings")
    argv[0] = "netharvest"
    if len(argv) == 1 or argv[1] in ("-h", "--help") or argv[1:] == ["help"]:
        sys.stdout.write(OVERVIEW)
        return
    if argv[1] == "crawl":
        # The trial crawl is the harvester's own: no Django, no database, no broker.
        from harvester.cli import crawl_main

        sys.exit(crawl_main(argv[2:]))
    if argv[1:3] == ["index", "cdx"]:
        # A crawl engineer's tool over files: no Django either.
        from indexer.cli import cdx_main

        sys.exit(cdx_main(argv[3:]))
    if argv[1:] == ["help", "--all"]:
        argv = argv[:2]
    elif not argv[1].startswith("-"):
        argv[1] = argv[1].replace("-", "_")
        if argv[1] == "help" and len(argv) > 2:
            argv[2] = argv[2].replace("-", "_")

    missing = _no_database(argv[1:])
    if missing:
        sys.exit(f"netharvest: {missing}")
    from django.core.management import execute_from_command_line

    execute_from_command_line(argv)


#: Commands that make the embedded database, or need none.
MAKE_OR_NO_DATABASE = {
    "up",
    "migrate",
    "help",
    "version",
    "check",
    "shell",
    "makemigrations",
    "collectstatic",
    "diffsettings",
    "startapp",
    "startproject",
    "makemessages",
    "compilemessages",
    "sendtestemail",
}


def _no_database(args: list[str]) -> str:
    """Why the command ``args`` cannot run: the embedded default's database does not exist in the data directory.
    The data directory defaults to ``./var`` of the current directory, so a command typed elsewhere than where
    ``netharvest up`` runs used to make an empty one there and die of "no such table" with a traceback. A
    command's ``--help``, and one given its own ``--settings`` or ``--database``, are left alone."""
    from harvester.runtime import embedded_database

    command = args[0] if args else ""
    if (
        command in MAKE_OR_NO_DATABASE
        or command.startswith("-")
        or any(a in ("-h", "--help") or a.startswith(("--settings", "--database")) for a in args)
        or os.environ.get("NETHARVEST_DATABASE_URL", "").strip()
        or os.environ.get("DJANGO_SETTINGS_MODULE") != "orchestrator.settings"
    ):
        return ""
    database = embedded_database()
    if database.exists():
        return ""
    return (
        f"no database at {database}: run this where `netharvest up` runs (its data directory is ./var there), "
        "set NETHARVEST_DATA_DIR (or NETHARVEST_DATABASE_URL) to the stack's, or make one here with "
        "`netharvest migrate`"
    )


if __name__ == "__main__":
    main()
