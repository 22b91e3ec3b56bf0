"""``netharvest preload --source NAME=FILE …``: prepare a broad crawl's domains from several sources.

Ingest and de-duplicate, check DNS, discover redirected domains, load — each step kept in a work
directory so an interrupted preload resumes where it stopped (orchestrator/preload/pipeline.py).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from orchestrator.preload.ingest import DATABASE, REDIRECT, InputError
from orchestrator.preload.pipeline import STEPS, Options, Preload
from orchestrator.preload.redirects import ProbeConfig
from orchestrator.preload.resolver import ResolverConfig, parse_nameserver, system_nameservers

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$")


class Command(BaseCommand):
    help = (
        "Prepare a broad crawl: ingest domains and URLs from each --source (one domain, host or http(s) URL "
        "per line; blank and # lines ignored) together with the domains already in the database; "
        "de-duplicate; check DNS (failed new domains are not created, failed existing ones get a zero "
        "snapshot budget); find domains the live ones redirect to; load. A re-run of the same command "
        "resumes an interrupted preload."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--source",
            action="append",
            default=[],
            metavar="NAME=FILE",
            required=True,
            help="a source list tagged NAME (e.g. afnic=afnic.txt); repeat for each source",
        )
        parser.add_argument(
            "--name",
            help="names the work directory NETHARVEST_DATA_DIR/preload/NAME "
            "(default: derived from the sources, so the same command resumes)",
        )
        parser.add_argument("--workdir", help="the work directory (overrides --name)")
        parser.add_argument("--restart", action="store_true", help="discard the work directory and start over")
        parser.add_argument("--stop-after", choices=STEPS, help="stop after this step (run again to go on)")
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="go on past invalid source lines (all are written to rejected.txt); "
            "without it, any invalid line stops the preload before anything is written",
        )
        parser.add_argument("--show-errors", type=int, default=50, help="invalid lines printed (50)")
        parser.add_argument(
            "--nameserver",
            action="append",
            default=[],
            metavar="IP[:PORT]",
            help="DNS server to ask (repeatable; default: those of /etc/resolv.conf)",
        )
        parser.add_argument("--dns-concurrency", type=int, default=500, help="lookups in flight at once (500)")
        parser.add_argument("--dns-timeout", type=float, default=2.0, help="seconds per DNS attempt (2)")
        parser.add_argument("--dns-retries", type=int, default=2, help="retries after a DNS timeout (2)")
        parser.add_argument("--skip-redirects", action="store_true", help="do not probe for redirects")
        parser.add_argument("--http-port", type=int, default=80, help="port of the redirect probes (80)")
        parser.add_argument("--http-concurrency", type=int, default=200, help="redirect probes at once (200)")
        parser.add_argument("--http-timeout", type=float, default=10.0, help="seconds per HTTP probe step (10)")
        parser.add_argument("--batch-size", type=int, default=20000, help="domains per load transaction (20000)")
        parser.add_argument(
            "--parallel",
            type=int,
            default=2,
            help="load batches written at once, each on its own database connection (2)",
        )

    def handle(self, *args: object, **options: object) -> None:
        sources = self._sources(options["source"])  # type: ignore[arg-type]
        workdir = self._workdir(options, sources)
        for key in ("dns_concurrency", "http_concurrency", "batch_size", "parallel"):
            if int(options[key]) < 1:  # type: ignore[call-overload]
                raise CommandError(f"--{key.replace('_', '-')} must be at least 1")
        try:
            nameservers = tuple(parse_nameserver(ns) for ns in options["nameserver"]) or system_nameservers()
        except ValueError as exc:
            raise CommandError(f"--nameserver: {exc} (give IP or IP:PORT)") from None
        if options["restart"] and workdir.exists():
            shutil.rmtree(workdir)
        concurrency = int(options["dns_concurrency"])  # type: ignore[call-overload]
        opts = Options(
            workdir=workdir,
            sources=sources,
            resolver=ResolverConfig(
                nameservers=nameservers,
                concurrency=concurrency,
                timeout=float(options["dns_timeout"]),  # type: ignore[arg-type]
                retries=int(options["dns_retries"]),  # type: ignore[call-overload]
                sockets=max(1, min(16, concurrency // 250)),
            ),
            probe=ProbeConfig(
                port=int(options["http_port"]),  # type: ignore[call-overload]
                timeout=float(options["http_timeout"]),  # type: ignore[arg-type]
                concurrency=int(options["http_concurrency"]),
            ),  # type: ignore[call-overload]
            skip_invalid=bool(options["skip_invalid"]),
            skip_redirects=bool(options["skip_redirects"]),
            stop_after=options["stop_after"],  # type: ignore[arg-type]
            progress_every=0.0 if int(options["verbosity"]) > 1 else 2.0,  # type: ignore[call-overload]
            batch_size=int(options["batch_size"]),  # type: ignore[call-overload]
            parallel=int(options["parallel"]),  # type: ignore[call-overload]
            show_errors=int(options["show_errors"]),  # type: ignore[call-overload]
        )
        self.stderr.write(f"preload work directory: {workdir}")
        try:
            stats = Preload(opts, self.stdout.write, self.stderr.write).run()
        except InputError as exc:
            raise CommandError(
                f"{exc.total:,} invalid source line(s) (listed above and in "
                f"{workdir / 'rejected.txt'}); nothing was loaded. Fix them, or re-run with "
                "--skip-invalid to leave them out."
            ) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if stats:
            self.stderr.write(f"statistics saved in {workdir / 'stats.json'} and {workdir / 'stats.txt'}")

    def _sources(self, values: list[str]) -> list[tuple[str, Path]]:
        sources: list[tuple[str, Path]] = []
        for value in values:
            name, sep, file = value.partition("=")
            if not sep or not file:
                raise CommandError(f"--source {value!r}: expected NAME=FILE, e.g. --source afnic=afnic.txt")
            if not _NAME_RE.match(name):
                raise CommandError(f"--source {value!r}: a source name is letters, digits, '.', '_' and '-'")
            if name in (DATABASE, REDIRECT):
                raise CommandError(f"--source {value!r}: {name!r} is reserved (the preload's own source)")
            if name in (n for n, _ in sources):
                raise CommandError(f"--source {value!r}: the name {name!r} is given twice")
            path = Path(file)
            if not path.is_file():
                raise CommandError(f"--source {value!r}: {file}: no such file")
            sources.append((name, path))
        return sources

    def _workdir(self, options: dict, sources: list[tuple[str, Path]]) -> Path:
        if options.get("workdir"):
            return Path(options["workdir"])
        name = options.get("name")
        if name and not _NAME_RE.match(name):
            raise CommandError(f"--name {name!r}: letters, digits, '.', '_' and '-' only")
        if not name:
            key = "\n".join(f"{n}={p.resolve()}" for n, p in sources)
            name = "-".join(n for n, _ in sources)[:40] + "-" + hashlib.sha1(key.encode()).hexdigest()[:8]
        return Path(settings.DATA_DIR) / "preload" / name
