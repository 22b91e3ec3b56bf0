"""``netharvest job-stats``: compute the QA statistics (JobStats) of ended jobs that lack them.

Result intake computes them as each job ends; this catches up jobs that ended before statistics
existed, and retries jobs whose reports could not be read then (a spool on a storage that was down).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from orchestrator.harvest.models import Job, JobStats, JobStatus
from orchestrator.harvest.qa.stats import record_job_stats


class Command(BaseCommand):
    help = "Compute the QA statistics of ended jobs (DONE or FAILED) that have none, or retry some."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("jobs", nargs="*", type=int, metavar="JOB", help="these jobs only (recomputed)")
        parser.add_argument(
            "--retry-reports", action="store_true", help="also recompute jobs whose reports could not be read last time"
        )
        parser.add_argument("--limit", type=int, default=10_000, help="at most this many jobs (default 10000)")

    def handle(self, *args: object, jobs: list[int], retry_reports: bool, limit: int, **options: object) -> None:
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        ended = Job.objects.filter(status__in=[JobStatus.DONE, JobStatus.FAILED, JobStatus.RESUBMITTED])
        if jobs:
            found = set(ended.filter(pk__in=jobs).values_list("pk", flat=True))
            unknown = sorted(set(jobs) - found)
            if unknown:
                raise CommandError(f"no ended job {', '.join(map(str, unknown))} (statistics are for ended jobs)")
            todo = sorted(found)
        else:
            missing = ended.exclude(pk__in=JobStats.objects.values("job"))
            todo = list(missing.order_by("id").values_list("pk", flat=True)[:limit])
            if retry_reports:
                todo += list(
                    JobStats.objects.exclude(reports_error="")
                    .order_by("job")
                    .values_list("job", flat=True)[: max(0, limit - len(todo))]
                )
        without = 0
        for pk in todo:
            row = record_job_stats(Job(pk=pk))
            if row.reports_error:
                without += 1
                self.stderr.write(f"job {pk}: {row.reports_error}")
        self.stdout.write(f"statistics computed for {len(todo)} job(s); {without} without readable reports")
