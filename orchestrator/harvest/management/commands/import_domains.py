"""``netharvest import-domains FILE``: bulk-load domains, one per line, millions of lines.

Streams the file (never all in memory at once, and never more than :data:`MAX_DOMAIN_LINE_BYTES` of
one line: a 300 MB line is one invalid line, not gigabytes of memory), validates each line, skips
existing domains and inserts the new ones in set-based batches with their default seeds and
configuration. Invalid lines are reported as ``FILE:LINE: reason`` (with at most a short prefix of
the line) so they can be fixed at the source.

Exit status: 0 when every line was imported or skipped as existing; 1 when any line was invalid
(the valid ones are imported all the same: re-running after fixing the file adds only the fixed
lines), so a script notices refused lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from orchestrator.harvest.curation.domains import (
    CreateResult,
    batched,
    create_domains,
    default_template,
    skip_fk_triggers_if_allowed,
)
from orchestrator.harvest.curation.validators import Line, normalize_domain_name, read_lines
from orchestrator.harvest.models import CrawlTemplate

#: A domain name is at most 253 characters; its Unicode form (before IDNA) at most ~4 bytes per
#: character of a label. Longer lines cannot be domains: they are refused without being held.
MAX_DOMAIN_LINE_BYTES = 1024


class Command(BaseCommand):
    help = (
        "Import domains from FILE (one registrable domain or IP per line; blank lines and lines starting "
        "with # are ignored; '-' reads standard input). New domains get default seeds "
        "(http/https, with and without www) and a default configuration; existing ones are skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the file to read, UTF-8, one domain per line; - for stdin")
        parser.add_argument("--batch-size", type=int, default=20000, help="domains per insert batch (20000)")
        parser.add_argument(
            "--show-errors", type=int, default=50, help="print at most this many invalid lines (50); all are counted"
        )
        parser.add_argument(
            "--rejected", metavar="PATH", help="also write every invalid line as FILE:LINE: reason to PATH"
        )
        parser.add_argument("--dry-run", action="store_true", help="validate only; create nothing")
        parser.add_argument(
            "--parallel", type=int, default=2, help="batches written at once, each on its own database connection (2)"
        )

    def handle(self, *args: object, **options: object) -> None:
        path = str(options["file"])
        if path != "-" and not Path(path).is_file():
            raise CommandError(f"{path}: no such file")
        template = default_template()
        started = time.monotonic()
        stats = {"lines": 0, "invalid": 0, "created": 0, "existing": 0}
        rejected = open(options["rejected"], "w", encoding="utf-8") if options["rejected"] else None
        shown = 0
        last_report = started

        def valid_names() -> Iterator[str]:
            nonlocal shown
            for line in _lines(path):
                stats["lines"] = line.number
                if line.text.startswith("#") or not (line.text or line.problem):
                    continue
                try:
                    if line.problem:
                        raise ValidationError(line.problem)
                    yield normalize_domain_name(line.text)
                except ValidationError as exc:
                    stats["invalid"] += 1
                    message = f"{path}:{line.number}: {'; '.join(exc.messages)}"
                    if shown < int(options["show_errors"]):
                        self.stderr.write(message)
                        shown += 1
                    if rejected:
                        rejected.write(message + "\n")

        def account(result: CreateResult) -> None:
            nonlocal last_report
            stats["created"] += len(result.created)
            stats["existing"] += result.existing
            now = time.monotonic()
            if now - last_report >= 2 or int(options["verbosity"]) > 1:
                last_report = now
                self.stderr.write(
                    f"  line {stats['lines']:,}: {stats['created']:,} created, "
                    f"{stats['existing']:,} existing, {stats['invalid']:,} invalid "
                    f"({stats['lines'] / (now - started):,.0f} lines/s)"
                )

        # Validation (Python) overlaps with inserts (the database), and up to --parallel batches are
        # written at once on their own connections, so both cores work. At most 2 × parallel batches
        # are in memory whatever the file's size.
        parallel = max(1, int(options["parallel"]))
        if connection.vendor == "sqlite":
            parallel = 1  # one writer at a time is all SQLite allows
        try:
            if parallel == 1:
                for batch in batched(valid_names(), int(options["batch_size"])):
                    if not options["dry_run"]:
                        account(_write_batch(batch, template, own_connection=False))
            else:
                with ThreadPoolExecutor(max_workers=parallel) as pool:
                    pending: set[Future[CreateResult]] = set()
                    for batch in batched(valid_names(), int(options["batch_size"])):
                        if options["dry_run"]:
                            continue
                        pending.add(pool.submit(_write_batch, batch, template))
                        if len(pending) >= 2 * parallel:
                            done, pending = wait(pending, return_when=FIRST_COMPLETED)
                            for future in done:
                                account(future.result())
                    for future in pending:
                        account(future.result())
        finally:
            if rejected:
                rejected.close()
        elapsed = time.monotonic() - started
        if shown < stats["invalid"]:
            self.stderr.write(
                f"… {stats['invalid'] - shown:,} more invalid lines not shown"
                + ("" if rejected else " (use --rejected PATH to keep them all)")
            )
        verb = "would be checked" if options["dry_run"] else "imported"
        self.stdout.write(
            f"{path}: {stats['lines']:,} lines {verb} in {elapsed:.1f} s: {stats['created']:,} "
            f"domains created, {stats['existing']:,} already existed, {stats['invalid']:,} "
            f"invalid lines."
        )
        if stats["invalid"]:
            raise CommandError(
                f"{path}: {stats['invalid']:,} invalid lines refused (see above); the valid lines were imported",
                returncode=1,
            )


def _write_batch(names: list[str], template: CrawlTemplate, own_connection: bool = True) -> CreateResult:
    """One batch in one transaction, on this thread's own connection.

    Commits need not wait for the disk (synchronous_commit off): a crash can lose only the last
    batches, never corrupt anything, and re-running the import finishes them, since existing domains
    are skipped. Where the database role may (a superuser, or one granted SET on the parameter), the
    batch also skips foreign-key triggers, as pg_restore --disable-triggers does: every reference in
    the batch is an id the same transaction just got back from RETURNING, so integrity holds by
    construction, and the triggers were over half of the cost (docs/DESIGN.md).
    """
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cur:
                    cur.execute("SET LOCAL synchronous_commit = off")
                    skip_fk_triggers_if_allowed(cur)
            return create_domains(names, template)
    finally:
        if own_connection:
            connection.close()  # a worker thread's connection ends with its batch


def _lines(path: str) -> Iterator[Line]:
    """Numbered lines, bounded in length; a line too long or not UTF-8 is an invalid line, not a crash."""
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        yield from read_lines(stream, MAX_DOMAIN_LINE_BYTES)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
