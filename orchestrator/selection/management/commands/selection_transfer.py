"""``netharvest selection-transfer``: bring the harvest definitions up to date with the selection."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from orchestrator.harvest.models import HarvestDefinition
from orchestrator.selection.transfer import transfer


class Command(BaseCommand):
    help = (
        "Transfer the selection's active records into the harvest definitions their collection × frequency "
        "is mapped to (idempotent; reports every change). Runs by itself before each scheduled run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--definition", help="only the records mapped to this harvest definition (name)")

    def handle(self, *args: object, **options: object) -> None:
        definition = None
        if options["definition"]:
            definition = HarvestDefinition.objects.filter(name=options["definition"]).first()
            if definition is None:
                raise CommandError(f"--definition {options['definition']!r}: no such harvest definition")
        report = transfer(definition)
        for line in report.lines():
            self.stdout.write(line)
