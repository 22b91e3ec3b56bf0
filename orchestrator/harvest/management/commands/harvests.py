"""``netharvest harvests list|show|create|add-seeds|run-now|activate|deactivate|set-next|seeds``: harvest
definitions and their runs.

``create`` makes a definition, its seeds and their budget in one transaction (orchestrator.api.newharvest, as
the API's ``POST /definitions``): a bad seed line is reported as ``FILE:LINE: …`` and nothing is created.

A continuous definition runs as one long-lived job: ``activate`` (or ``run-now``) starts it, ``deactivate``
stops it, ``seeds`` sends seeds added or removed to the running crawl (orchestrator/harvest/jobs/continuous.py).

``run-now`` exit status: 0 the run's jobs are submitted (a run that was still waiting to be dispatched is
sent instead of making a second one, and says so); 1 refused (the message says why); 3 the run is in the
database (made now, or an earlier one still waiting: no new run) but the broker does not answer, so its NEW
jobs will be dispatched by beat once it does: one line on stderr says so, never a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count, Max, Min, Sum
from django.utils import timezone

from orchestrator.api import newharvest
from orchestrator.api.errors import Invalid
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.curation.validators import preview, read_lines
from orchestrator.harvest.jobs import continuous, dispatch, jobgen
from orchestrator.harvest.management.commands.jobs import _parse_time as parse_time
from orchestrator.harvest.management.commands.jobs import _who
from orchestrator.harvest.models import CrawlTemplate, HarvestDefinition, Job
from orchestrator.harvest.scheduling import scheduler
from orchestrator.harvest.scheduling.schedules import upcoming_runs
from orchestrator.harvest.tables import filesize, render
from webui.forms.continuous import revisit_form_data

#: ``run-now``'s exit status when the run is in the database but its jobs wait for the broker.
WAITING_FOR_BROKER = 3

#: ``create``'s options for a continuous definition: (option, the definition's field, metavar, help). Durations
#: are typed as in the web UI (``15m``, ``1d``); the values go through the same form as the web UI's and the API's.
CONTINUOUS_OPTIONS = (
    ("--fetch-budget", "fetch_budget_per_s", "PER_S", "fetches per second the job never exceeds (default: none)"),
    ("--warc-every", "warc_rotate_s", "DURATION", "close and index its WARC file at least this often (default 15m)"),
    ("--max-uris-per-host", "max_uris_per_host", "N", "links of a host beyond this many are not followed"),
    ("--robots-validity", "robots_validity_s", "DURATION", "obey a host's robots.txt this long (default 1d)"),
    ("--dns-ttl", "dns_ttl_s", "DURATION", "keep a host's DNS answer or failure this long (default 6h)"),
    (
        "--revisit",
        "revisit_settings",
        "JSON|FILE",
        "the revisit policy's settings, a RevisitSettings JSON object or a file holding one (- = stdin), "
        'e.g. \'{"min_wait_s": 600, "strip": ["<span class=\\"clock\\">[^<]*</span>"]}\'',
    ),
)
#: The web UI form's revisit fields, which a ``--revisit`` object fills (their errors name ``--revisit``).
_REVISIT_FORM_FIELDS = frozenset({"policy", *revisit_form_data({})})


class Command(BaseCommand):
    help = "List and show harvest definitions; run one now; activate, deactivate or move its next run. Times are UTC."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        lister = sub.add_parser("list", help="harvest definitions: kind, channel, schedule, runs, next run")
        lister.add_argument("--kind", choices=[k for k, _ in HarvestDefinition.KINDS])
        lister.add_argument("--active", action="store_true", help="only active definitions")
        show = sub.add_parser("show", help="one definition: settings, upcoming runs, its runs and their jobs")
        show.add_argument("harvest", help="name or id")
        show.add_argument("--upcoming", type=int, default=5, help="how many upcoming runs to list (selective)")
        create = sub.add_parser("create", help="create a definition; selective: with the seeds of a file")
        create.add_argument("name")
        create.add_argument("--kind", choices=newharvest.KINDS, default="selective")
        create.add_argument(
            "--seeds",
            metavar="FILE",
            help="selective, continuous: seed URLs, one per line (- = stdin); a bare "
            "host means http://; # lines are skipped. Any bad line: nothing is created",
        )
        create.add_argument(
            "--template",
            metavar="NAME",
            help="selective, continuous: the crawl template of the seeds' configurations (default: the default one)",
        )
        create.add_argument("--schedule", metavar="NAME", help="selective: the schedule it runs on")
        create.add_argument("--channel", metavar="NAME", help="default: the channel for this kind")
        create.add_argument("--max-objects", type=int, help="per domain; -1 = unlimited")
        create.add_argument("--max-bytes", type=int, help="per domain; -1 = unlimited")
        create.add_argument(
            "--max-time", type=int, dest="max_job_running_time_s", help="snapshot: seconds a job may run (0 = no limit)"
        )
        create.add_argument("--previous", metavar="NAME", help="snapshot: continue this earlier snapshot")
        for option, field, metavar, text in CONTINUOUS_OPTIONS:
            create.add_argument(option, dest=field, metavar=metavar, help=f"continuous: {text}")
        create.add_argument("--comments", default="")
        create.add_argument(
            "--activate",
            action="store_true",
            help="activate it at once (selective: needs --schedule; snapshot: runs at the scheduler's next round)",
        )
        more = sub.add_parser(
            "add-seeds", help="add the seeds of a file to a selective or continuous definition (all or nothing)"
        )
        more.add_argument("harvest", help="name or id")
        more.add_argument("--seeds", metavar="FILE", required=True, help="seed URLs, one per line (- = stdin)")
        more.add_argument("--template", metavar="NAME", help="the crawl template of new configurations")
        run = sub.add_parser(
            "run-now",
            help="make a run now and dispatch its jobs (the schedule is unchanged); "
            "exit status 3: made, but its jobs wait for the broker",
        )
        run.add_argument("harvest", help="name or id")
        run.add_argument(
            "--force",
            action="store_true",
            help="make a new run even if an earlier one is still waiting to be dispatched",
        )
        for name, text in (
            ("activate", "switch a definition on (selective: from its schedule's next event)"),
            ("deactivate", "switch a definition off (a run being generated finishes)"),
        ):
            sub.add_parser(name, help=text).add_argument("harvest", help="name or id")
        seeds = sub.add_parser(
            "seeds",
            help="add seeds to / remove seeds from a continuous definition: stored in its seed lists and sent "
            "to its running job",
        )
        seeds.add_argument("harvest", help="name or id")
        seeds.add_argument("--add", action="append", default=[], metavar="URL", help="a seed to add (repeatable)")
        seeds.add_argument("--remove", action="append", default=[], metavar="URL", help="a seed to remove (repeatable)")
        set_next = sub.add_parser("set-next", help="move the next run of a selective definition")
        set_next.add_argument("harvest", help="name or id")
        set_next.add_argument("when", help="UTC time: YYYY-MM-DD[THH:MM], or 'now'")

    def handle(self, *args: object, action: str, **options: object) -> None:
        handler = getattr(self, f"do_{action.replace('-', '_')}")
        logger = logging.getLogger("orchestrator")
        level = logger.level
        if int(str(options.get("verbosity", 1))) < 2:
            # The command says what happened itself; the services' INFO log lines (-v 2 shows them) would bury
            # the one line that matters, e.g. "run 3 … made: its jobs wait for the broker".
            logger.setLevel(logging.WARNING)
        try:
            handler(**options)
        except (scheduler.SchedulerError, jobgen.GenerationError, continuous.ContinuousError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            logger.setLevel(level)

    def _definition(self, key: str) -> HarvestDefinition:
        query = HarvestDefinition.objects.select_related("schedule", "channel", "previous")
        found = query.filter(name=key).first() or (query.filter(pk=int(key)).first() if key.isdigit() else None)
        if found is None:
            raise CommandError(
                f"no harvest definition named or numbered {key!r} "
                "(netharvest harvests list shows the definitions there are)"
            )
        return found

    def do_list(self, kind: str | None, active: bool, **_: object) -> None:
        definitions = HarvestDefinition.objects.select_related("schedule", "channel").order_by("name")
        if kind:
            definitions = definitions.filter(kind=kind)
        if active:
            definitions = definitions.filter(active=True)
        rows = [
            (
                d.pk,
                d.name,
                d.kind,
                d.channel.name,
                "yes" if d.active else "no",
                _plan(d),
                d.runs,
                _next(d),
                d.skipped_events or "",
            )
            for d in definitions
        ]
        self.stdout.write(
            render(["id", "name", "kind", "channel", "active", "schedule", "runs", "next run (UTC)", "skipped"], rows)
        )

    def do_show(self, harvest: str, upcoming: int, **_: object) -> None:
        d = self._definition(harvest)
        lines = [
            f"harvest {d.pk}: {d.name} ({d.get_kind_display()}), channel {d.channel.name}, "
            f"{'active' if d.active else 'inactive'}, {d.runs} run(s) made"
        ]
        if d.kind == d.SELECTIVE:
            lines.append(f"  schedule: {_plan(d)}")
            lines.append(
                f"  next run: {_next(d)} UTC"
                + (f"; {d.skipped_events} event(s) skipped while down" if d.skipped_events else "")
            )
            lines.append(f"  configurations: {d.configurations.count()}")
            if d.schedule and d.next_date and upcoming > 0:
                runs = upcoming_runs(d.schedule, upcoming, d.next_date, d.runs)
                lines.append("  upcoming: " + ", ".join(f"{r:%Y-%m-%d %H:%M}" for r in runs))
        elif d.kind == d.SNAPSHOT:
            lines.append(
                f"  per domain: objects {_limit(d.max_objects)}, size {filesize(d.max_bytes)}; "
                f"job time limit {f'{d.max_job_running_time_s} s' if d.max_job_running_time_s else 'none'}"
            )
            if d.previous:
                lines.append(f"  continues {d.previous.name}: only the domains it did not finish")
        elif d.kind == d.CONTINUOUS:
            job = continuous.live_job(d)
            lines.append(
                f"  job: {f'{job.pk} ({job.status})' if job else 'none running'}; fetch budget "
                f"{f'{d.fetch_budget_per_s:g}/s' if d.fetch_budget_per_s else 'none'}; WARCs closed every "
                f"{d.warc_rotate_s} s; at most {d.max_uris_per_host:,} URIs per host; robots.txt obeyed "
                f"{d.robots_validity_s} s, DNS answers kept {d.dns_ttl_s} s; "
                f"revisit settings {d.revisit_settings or 'defaults'}"
            )
        if d.crawler_traps.strip():
            lines.append(f"  crawler traps: {len(d.crawler_traps.splitlines())}")
        self.stdout.write("\n".join(lines))
        runs = (
            Job.objects.filter(harvest=d)
            .values("harvest_run")
            .annotate(
                jobs=Count("id"),
                domains=Sum("domain_count"),
                expected=Sum("expected_bytes"),
                created=Min("created"),
                ended=Max("ended_at"),
            )
            .order_by("-harvest_run")[:20]
        )
        if runs:
            statuses: dict[int, dict[str, int]] = {}
            for run, status, count in (
                Job.objects.filter(harvest=d).values_list("harvest_run", "status").annotate(n=Count("id"))
            ):
                statuses.setdefault(run, {})[status] = count
            self.stdout.write(
                "\n"
                + render(
                    ["run", "jobs", "domains", "expected", "created (UTC)", "last ended (UTC)", "job states"],
                    [
                        (
                            r["harvest_run"],
                            r["jobs"],
                            r["domains"],
                            filesize(r["expected"]),
                            r["created"],
                            r["ended"],
                            " ".join(f"{s}:{n}" for s, n in sorted(statuses.get(r["harvest_run"], {}).items())),
                        )
                        for r in runs
                    ],
                )
            )

    def do_create(
        self,
        name: str,
        kind: str,
        seeds: str | None,
        template: str | None,
        schedule: str | None,
        channel: str | None,
        max_objects: int | None,
        max_bytes: int | None,
        max_job_running_time_s: int | None,
        previous: str | None,
        comments: str,
        activate: bool,
        **options: object,
    ) -> None:
        fields = {
            "name": name,
            "comments": comments,
            "schedule": schedule,
            "channel": channel,
            "previous": previous,
            "max_job_running_time_s": max_job_running_time_s,
            **{field: options.get(field) for _, field, _, _ in CONTINUOUS_OPTIONS},
        }
        if isinstance(fields["revisit_settings"], str):
            fields["revisit_settings"] = _read_json(fields["revisit_settings"], "--revisit")
        fields = {k: v for k, v in fields.items() if v is not None}
        text = _read_seeds(seeds) if seeds else None
        try:
            made = newharvest.create(
                kind,
                fields,
                seeds=text,
                template=template,
                max_objects=max_objects,
                max_bytes=max_bytes,
                activate=activate,
            )
        except newharvest.SeedLinesInvalid as exc:
            raise self._seed_errors(seeds, exc.lines, "nothing was created") from None
        except Invalid as exc:
            raise CommandError("; ".join(f"{_option(loc)}: {message}" for loc, message in exc.errors)) from None
        d = made.definition
        self.stdout.write(
            f"harvest {d.pk}: {d.name} ({d.kind}) created"
            + (
                f" with {made.seeds} seed(s) on {made.domains} domain(s), {len(made.created_domains)} of them new"
                if text is not None
                else ""
            )
            + (f"; active, next run {_next(d)}" if d.active else "; inactive (activate it to run)")
        )

    def _seed_errors(self, path: str, lines: list, outcome: str) -> CommandError:
        """Each refused seed line on stderr as FILE:LINE (the first 50); the error to raise."""
        where = "<stdin>" if path == "-" else path
        for error in lines[:50]:
            self.stderr.write(f"{where}:{error.line}: {preview(error.text)}: {error.message}")
        return CommandError(f"{len(lines)} seed line(s) refused: {outcome}")

    def do_add_seeds(self, harvest: str, seeds: str, template: str | None, **_: object) -> None:
        d = self._definition(harvest)
        if d.kind == HarvestDefinition.SNAPSHOT:
            raise CommandError(f"{d.name} is a snapshot harvest: seeds are added to selective and continuous ones")
        chosen = None
        if template is not None:
            chosen = CrawlTemplate.objects.filter(name=template, active=True).first()
            if chosen is None:
                raise CommandError(f"--template: no active crawl template named {template!r}")
        result = seeding.add_seeds(d, _read_seeds(seeds), chosen, requested_by=_who())
        if not result.ok:
            raise self._seed_errors(seeds, result.errors, "nothing was added")
        self.stdout.write(
            f"{sum(len(s) for s in result.seeds.values())} seed(s) on {len(result.seeds)} domain(s) "
            f"added to {d.name} ({len(result.created_domains)} new domain(s))"
            + _told(d, result.told, result.tell_error)
        )

    def do_run_now(self, harvest: str, force: bool = False, **_: object) -> None:
        d = self._definition(harvest)
        outcome = scheduler.run_now(d, requested_by=_who(), force=force)
        jobs = outcome.jobs
        self.stdout.write(
            f"{d.name} run {outcome.run}: {len(jobs)} job(s), "
            f"{sum(j.domain_count for j in jobs)} domain configuration(s)"
        )
        self.stdout.write(
            render(
                ["job", "domains", "expected objects", "expected size", "status"],
                [(j.pk, j.domain_count, j.expected_objects, filesize(j.expected_bytes), j.status) for j in jobs],
            )
        )
        if outcome.waiting:
            raise CommandError(
                outcome.describe() + ("" if outcome.made else "; --force makes another run anyway"),
                returncode=WAITING_FOR_BROKER,
            )
        if not outcome.made:
            self.stdout.write(outcome.describe())

    def do_activate(self, harvest: str, **_: object) -> None:
        d = scheduler.activate(self._definition(harvest))
        if d.kind == d.CONTINUOUS:
            job = continuous.live_job(d)
            self.stdout.write(
                f"{d.name} activated; its continuous job {job.pk if job else '-'} is "
                f"{job.status if job else 'not made'} on channel {d.channel.name}"
            )
            return
        self.stdout.write(f"{d.name} activated; next run {_next(d)}" + (" UTC" if d.next_date else ""))

    def do_deactivate(self, harvest: str, **_: object) -> None:
        try:
            d = scheduler.deactivate(self._definition(harvest))
        except dispatch.BrokerUnavailable as exc:  # deactivated; its job's stop waits for the broker
            self.stdout.write(str(exc))
            return
        self.stdout.write(f"{d.name} deactivated")

    def do_seeds(self, harvest: str, add: list[str], remove: list[str], **_: object) -> None:
        """Seeds into and out of a continuous definition: stored in its seed lists (the seeds of its next job) and
        sent to its running job, as a paste and a seed list edit in the web UI do."""
        d = self._definition(harvest)
        if d.kind != d.CONTINUOUS:
            raise CommandError(f"{d.name} is a {d.kind} harvest: add seeds to it with add-seeds")
        if not (add or remove):
            raise CommandError("give --add URL and/or --remove URL")
        told, error = None, ""
        bad = seeding.parse("\n".join(add)).errors if add else []
        if bad:  # checked before anything is removed: all or nothing
            raise CommandError(f"--add {add[bad[0].line - 1]}: {bad[0].message}; nothing was changed")
        if remove:
            removed = seeding.remove_seeds(d, remove, requested_by=_who())
            if not removed.ok:
                raise CommandError(f"--remove {removed.errors[0]}; nothing was changed")
            told, error = removed.told, removed.tell_error
        if add:
            added = seeding.add_seeds(d, "\n".join(add), requested_by=_who())
            told, error = added.told or told, added.tell_error or error
        self.stdout.write(f"{d.name}: {len(add)} seed(s) added, {len(remove)} removed" + _told(d, told, error))

    def do_set_next(self, harvest: str, when: str, **_: object) -> None:
        d = scheduler.set_next(self._definition(harvest), _parse_time(when))
        self.stdout.write(
            f"{d.name}: next run {d.next_date:%Y-%m-%d %H:%M} UTC"
            + ("" if d.active else " (inactive: activate it to run)")
        )


def _told(d: HarvestDefinition, told: Any, error: str) -> str:
    """Whether a continuous definition's running job heard of a seed change."""
    if d.kind != HarvestDefinition.CONTINUOUS:
        return ""
    if error:
        return f"; its running job is not told yet ({error})"
    if told is None:
        return "; no job is running: the next one starts from these seeds"
    return f"; sent to its running job {told.job_id}"


def _plan(d: HarvestDefinition) -> str:
    if d.kind == d.SELECTIVE:
        return d.schedule.describe() if d.schedule else "no schedule"
    if d.kind == d.SNAPSHOT:
        return "once" + (f", continuing {d.previous.name}" if d.previous_id and d.previous else "")
    return "continuous"


def _next(d: HarvestDefinition) -> str:
    if d.kind == d.SNAPSHOT:
        return "done" if d.runs else ("next round" if d.active else "-")
    if d.kind != d.SELECTIVE or not d.active and d.next_date is None:
        return "-"
    if d.next_date is None:
        return "schedule ended" if d.runs else "-"
    return f"{d.next_date:%Y-%m-%d %H:%M}"


def _limit(value: int) -> str:
    return "unlimited" if value < 0 else str(value)


def _parse_time(text: str) -> datetime:
    return timezone.now() if text == "now" else parse_time(text)


def _read_seeds(path: str) -> str:
    """The seeds file as text, line numbers kept (a blank stands for a line that is not a seed); a line the
    bounded reader refuses (too long, not UTF-8) is reported as FILE:LINE."""
    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise CommandError(f"{path}: {exc.strerror}") from None
    try:
        lines = list(read_lines(stream))
    finally:
        if path != "-":
            stream.close()
    problems = [f"{path}:{line.number}: {line.problem}" for line in lines if line.problem]
    if problems:
        raise CommandError("\n".join(problems[:50]) + f"\n{len(problems)} line(s) unreadable: nothing was created")
    return "\n".join(line.text for line in lines)


def _option(loc: list[str | int]) -> str:
    """A refused field named as the command's option (``schedule`` → ``--schedule``; a revisit setting, which
    the web UI's form checks field by field, as ``--revisit`` and its key)."""
    field = str(loc[1]) if len(loc) > 1 else "harvest"
    named = {"name": "name", "max_job_running_time_s": "--max-time"}
    named.update({f: option for option, f, _, _ in CONTINUOUS_OPTIONS})
    if field in named:
        return named[field] + "".join(f" {part}" for part in loc[2:])
    if field in _REVISIT_FORM_FIELDS:
        return f"--revisit {field}"
    return f"--{field.replace('_', '-')}"


def _read_json(value: str, option: str) -> Any:
    """``value`` as JSON, or the JSON of the file it names (``-``: stdin)."""
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = sys.stdin.read() if value == "-" else Path(value).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{option}: {value}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{option}: {value}: not UTF-8") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{option}: not JSON ({exc})") from None
