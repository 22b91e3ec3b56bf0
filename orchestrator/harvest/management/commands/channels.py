"""``netharvest channels list|create``: harvest channels and the queues their workers serve."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count, Q

from orchestrator.harvest.models import HarvestChannel
from orchestrator.harvest.tables import render


class Command(BaseCommand):
    help = (
        "List or create harvest channels. A channel is a Celery queue harvest.NAME; high-priority workers "
        "serve high channels, so selective harvests never wait behind broad crawls."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        sub.add_parser("list", help="channels with their queue and job counts")
        create = sub.add_parser("create", help="add a channel")
        create.add_argument("name", help="lower-case letters, digits, - and _")
        create.add_argument("--priority", choices=["high", "low"], required=True)
        create.add_argument("--comments", default="")

    def handle(self, *args: object, action: str, **options: object) -> None:
        if action == "create":
            channel = HarvestChannel(name=options["name"], priority=options["priority"], comments=options["comments"])
            try:
                channel.full_clean()
            except ValidationError as exc:
                raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
            channel.save()
            self.stdout.write(
                f"channel {channel.name} ({channel.priority}) created: start a worker with "
                f"`celery -A harvester.worker worker --queues {channel.queue} --concurrency 1`"
            )
            return
        channels = HarvestChannel.objects.annotate(
            definitions_count=Count("definitions", distinct=True),
            waiting=Count("jobs", filter=Q(jobs__status__in=["NEW", "SUBMITTED"]), distinct=True),
            running=Count("jobs", filter=Q(jobs__status="STARTED"), distinct=True),
        )
        self.stdout.write(
            render(
                ["name", "priority", "queue", "default for", "definitions", "waiting", "running"],
                [
                    (c.name, c.priority, c.queue, c.default_for, c.definitions_count, c.waiting, c.running)
                    for c in channels
                ],
            )
        )
