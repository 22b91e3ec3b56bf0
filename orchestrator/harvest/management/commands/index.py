"""``netharvest index status|run|reindex|merge|verify|cdx``: the crawl engineer's handle on the indexer chain."""

from __future__ import annotations

import shutil
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count, Sum
from django.utils import timezone

from indexer.merge import UnsortedInputError
from indexer.objectstore import ObjectLocation
from orchestrator.harvest.chain import merging, storage
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.chain import verify as verifying
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.tables import filesize, render


class Command(BaseCommand):
    help = (
        "The indexer chain (ingest → index → transfer → backup → delete, then merge and bigmerge): "
        "state, running it now, reindexing, merging, verifying stored copies, printing CDX. Times are UTC."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        status = sub.add_parser(
            "status",
            help="files per state and per storage location; files in progress; "
            "failures; or one file's state and copies",
        )
        status.add_argument("file", nargs="?", metavar="FILE", help="show this file only")
        run = sub.add_parser("run", help="do every pending step now, in this process (failed files are retried)")
        run.add_argument("files", nargs="*", metavar="FILE", help="only these files (names)")
        run.add_argument(
            "--take-over",
            action="store_true",
            help="also take steps another worker holds (only when you know it is dead)",
        )
        reindex = sub.add_parser("reindex", help="rewrite one file's CDX and dedup entries from its stored copy")
        reindex.add_argument("file", metavar="FILE")
        merge = sub.add_parser("merge", help="merge the files indexed since the last merge into a daily file")
        merge.add_argument("--big", action="store_true", help="then bigmerge the dailies into the master indexes")
        merge.add_argument(
            "--rebuild",
            action="store_true",
            help="rebuild the master and per-harvest indexes from every stored file's CDX",
        )
        verify = sub.add_parser("verify", help="re-hash stored copies; exit status 1 if any is missing or corrupt")
        verify.add_argument("--location", help="only this storage location")
        verify.add_argument("--file", help="only this file (name)")
        verify.add_argument(
            "--repair",
            action="store_true",
            help="restore missing or corrupt copies from a good one (corrupt files are kept aside)",
        )
        load = sub.add_parser(
            "dedup-load",
            help="load an existing SQLite dedup index into the dedup service "
            "(NETHARVEST_DEDUP_URL); loading twice changes nothing",
        )
        load.add_argument(
            "sqlite", nargs="?", metavar="SQLITE", help="the SQLite index (default: NETHARVEST_DEDUP_INDEX)"
        )
        cdx = sub.add_parser("cdx", help="print the CDX of WARC files (needs no database)")
        cdx.add_argument("warcs", nargs="*", metavar="WARC")

    def handle(self, *args: object, action: str, **options: object) -> None:
        try:
            getattr(self, f"do_{action.replace('-', '_')}")(**options)
        except (chain.ChainError, ImproperlyConfigured, UnsortedInputError) as exc:
            raise CommandError(str(exc)) from None
        except BrokenPipeError:
            raise  # the reader went away: orchestrator.cli stops quietly
        except OSError as exc:  # a full disk, an unreadable index directory: say which file, no traceback
            raise CommandError(f"{type(exc).__name__}: {exc}") from None

    # --- status ---------------------------------------------------------------------------------------

    def do_status(self, file: str | None = None, **_: object) -> None:
        if file:
            self._show(chain.find(file))
            return
        counts = {
            row["index_state"]: row
            for row in ArchiveFile.objects.values("index_state").annotate(files=Count("id"), bytes=Sum("size"))
        }
        rows = [
            (state.value, counts.get(state, {}).get("files", 0), filesize(counts.get(state, {}).get("bytes", 0)))
            for state in IndexState
        ]
        self.stdout.write("Files by state\n" + render(["state", "files", "size"], rows))

        per_location = {
            r["location"]: r
            for r in ArchiveFileCopy.objects.values("location").annotate(copies=Count("id"), bytes=Sum("file__size"))
        }
        bad = dict(
            ArchiveFileCopy.objects.filter(verified_ok=False)
            .values("location")
            .annotate(n=Count("id"))
            .values_list("location", "n")
        )
        loc_rows = []
        for name, loc in storage.all_locations().items():
            if isinstance(loc, ObjectLocation):  # a bucket: its configured capacity, if any
                free = (
                    "MISSING"
                    if not loc.available()
                    else "unlimited"
                    if loc.capacity is None
                    else filesize(loc.capacity)
                )
            else:
                free = filesize(shutil.disk_usage(loc.path).free) if Path(loc.path).is_dir() else "MISSING"
            row = per_location.pop(name, {})
            loc_rows.append(
                (
                    name,
                    "replica" if loc.replica else "primary",
                    str(loc.path),
                    row.get("copies", 0),
                    filesize(row.get("bytes") or 0),
                    bad.get(name, 0),
                    free,
                )
            )
        for name, row in per_location.items():  # copies in a location no longer configured
            loc_rows.append(
                (name, "unconfigured", "-", row["copies"], filesize(row["bytes"] or 0), bad.get(name, 0), "-")
            )
        self.stdout.write(
            "\nStorage locations\n"
            + render(["location", "kind", "path", "copies", "size", "not verified ok", "free"], loc_rows)
        )

        now = timezone.now()
        busy = ArchiveFile.objects.filter(claimed_until__gt=now).order_by("name")[:50]
        if busy:
            self.stdout.write(
                "\nIn progress\n"
                + render(
                    ["file", "step", "lease until (UTC)"],
                    [(f.name, chain.step_name(f.index_state), f.claimed_until) for f in busy],
                )
            )
        failed = ArchiveFile.objects.filter(index_state=IndexState.FAILED).order_by("name")[:200]
        if failed:
            self.stdout.write(
                "\nFailed (netharvest index run retries them)\n"
                + render(
                    ["file", "job", "failed step", "attempts", "error"],
                    [
                        (
                            f.name,
                            f.job_id,
                            chain.step_name(f.failed_step),
                            f.attempts,
                            f.error.splitlines()[0] if f.error else "",
                        )
                        for f in failed
                    ],
                )
            )
        dailies = len(list(storage.daily_dir().glob("*.files"))) if storage.daily_dir().is_dir() else 0
        master = storage.master_cdx()
        self.stdout.write(
            f"\nIndexes in {storage.index_dir()}: {merging.unmerged().count()} stored files not merged yet, "
            f"{dailies} daily merges waiting for bigmerge, master CDX "
            f"{filesize(master.stat().st_size) if master.is_file() else 'not built yet'}; "
            f"dedup index {storage.dedup_index_path()}\n"
        )

    def do_dedup_load(self, sqlite: str | None = None, **_: object) -> None:
        from django.conf import settings

        from indexer.dedupclient import DedupClient, DedupServiceError
        from indexer.dedupservice import load_sqlite

        if not settings.NETHARVEST_DEDUP_URL:
            raise CommandError("NETHARVEST_DEDUP_URL is not set: which dedup service should the index go to?")
        path = Path(sqlite) if sqlite else storage.dedup_index_path()
        client = DedupClient(settings.NETHARVEST_DEDUP_URL)
        try:
            n = load_sqlite(client, path)
        except DedupServiceError as exc:
            raise CommandError(str(exc)) from None
        finally:
            client.close()
        self.stdout.write(f"loaded {n} captures from {path} into {settings.NETHARVEST_DEDUP_URL}\n")

    def _show(self, f: ArchiveFile) -> None:
        lines = [
            f"{f.name}: {f.get_kind_display()}, {filesize(f.size)}, job {f.job_id or '-'}, harvest definition "
            f"{f.harvest.name if f.harvest else '-'}",
            f"  state {f.index_state}"
            + (
                f" (failed at {chain.step_name(f.failed_step)}, {f.attempts} attempts)"
                if f.index_state == IndexState.FAILED
                else ""
            ),
            f"  SHA-256 {f.sha256 or '(not ingested yet)'}; harvester's {f.harvester_sha256 or '-'}",
            f"  spool {f.spool_path or '-'} ({'present' if f.spool_path and Path(f.spool_path).exists() else 'gone'})",
            f"  CDX {f.cdx_path or '-'} ({f.records} lines); merged {f.merged_at or 'not yet'}",
        ]
        if f.claimed_until and f.claimed_until > timezone.now():
            lines.append(f"  being worked on: {chain.step_name(f.index_state)}, lease until {f.claimed_until:%H:%M:%S}")
        if f.error:
            lines.append(f"  error: {f.error}")
        self.stdout.write("\n".join(lines))
        copies = f.copies.order_by("is_replica", "location")
        if copies:
            self.stdout.write(
                render(
                    ["location", "kind", "path", "verified (UTC)", "ok"],
                    [
                        (
                            c.location,
                            "replica" if c.is_replica else "primary",
                            c.path,
                            c.verified_at,
                            "yes" if c.verified_ok else "NO",
                        )
                        for c in copies
                    ],
                )
            )

    # --- run, reindex ---------------------------------------------------------------------------------

    def do_run(self, files: list[str], take_over: bool, **_: object) -> None:
        names = [chain.find(name).name for name in files] if files else None
        summary = chain.run_pending(take_over=take_over, names=names)
        self.stdout.write(
            f"{summary.done} files through the chain, {len(summary.failed)} failed, "
            f"{len(summary.busy)} held by another worker"
        )
        for name, error in summary.failed:
            self.stdout.write(f"  FAILED {name}: {error}")
        for name in summary.busy:
            self.stdout.write(f"  busy {name} (another worker holds it; --take-over if it is dead)")
        if summary.failed:
            raise CommandError(f"{len(summary.failed)} file(s) failed (netharvest index status shows them)")

    def do_reindex(self, file: str, **_: object) -> None:
        f = chain.reindex(file)
        if f.index_state == IndexState.FAILED:
            raise CommandError(f"{f.name}: {f.error}")
        self.stdout.write(
            f"{f.name}: {f.records} CDX lines in {f.cdx_path}; state {f.index_state}; the next merge takes them"
        )

    # --- merge, verify, cdx ---------------------------------------------------------------------------

    def do_merge(self, big: bool, rebuild: bool, **_: object) -> None:
        if rebuild:
            result = merging.rebuild()
            self.stdout.write(
                f"rebuilt: master {result.master_cdx_lines} CDX lines, {result.master_path_lines} "
                f"PATH lines, {len(result.harvests)} harvest sub-indexes"
            )
            return
        merged = merging.merge()
        if merged.files:
            self.stdout.write(f"merge: {merged.files} files, {merged.cdx_lines} CDX lines into daily {merged.daily}")
        else:
            self.stdout.write("merge: nothing new to merge")
        for name in merged.missing:
            self.stderr.write(f"  {name}: its CDX or PATH file is missing (netharvest index reindex {name})")
        if big:
            result = merging.bigmerge()
            self.stdout.write(
                f"bigmerge: {result.dailies} daily merges; master {result.master_cdx_lines} CDX "
                f"lines, {result.master_path_lines} PATH lines; harvest sub-indexes "
                f"{', '.join(map(str, result.harvests)) or '-'}"
            )

    def do_verify(self, location: str | None, file: str | None, repair: bool = False, **_: object) -> None:
        name = chain.find(file).name if file else None
        try:
            report = verifying.verify(location=location, name=name)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        locations = sorted(set(report.checked) | {p.location for p in report.problems})
        self.stdout.write(
            render(
                ["location", "copies checked", "good", "missing", "corrupt"],
                [
                    (
                        loc,
                        report.checked[loc],
                        report.good[loc],
                        sum(1 for p in report.problems if p.location == loc and p.kind == "missing"),
                        sum(1 for p in report.problems if p.location == loc and p.kind == "corrupt"),
                    )
                    for loc in locations
                ],
            )
        )
        for p in report.problems:
            self.stdout.write(f"  {p.kind.upper()}: {p.location} {p.name} {p.path} {p.detail}".rstrip())
        if repair and not report.ok:
            outcomes = verifying.repair(report)
            for p, outcome in outcomes:
                self.stdout.write(f"  {p.location} {p.name}: {outcome}")
            left = [p for p, outcome in outcomes if not outcome.startswith("repaired")]
            if left:
                raise CommandError(f"{len(left)} problem(s) not repaired")
            self.stdout.write(f"all {len(outcomes)} problem(s) repaired")
            return
        if not report.ok:
            raise CommandError(f"{len(report.problems)} problem(s) found")
        self.stdout.write("all copies verified")

    def do_cdx(self, warcs: list[str], **_: object) -> None:
        from indexer.cli import cdx_main

        status = cdx_main(list(warcs))
        if status:
            raise CommandError(f"netharvest index cdx failed (exit status {status})")
