"""Archive files (WARCs and metadata WARCs) and their copies in storage locations.

``index_state`` follows the BnF indexing chain (shared/seeds/001…, 4.1): each step records that it is
done, so a re-run after a crash picks up where the chain stopped. A worker doing a step holds a lease on
the file (``claim_token`` until ``claimed_until``) while the state still names the last step done; a
killed worker's lease simply runs out (orchestrator/harvest/chain/steps.py).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class IndexState(models.TextChoices):
    HARVESTED = "HARVESTED", "harvested (in the harvester's spool)"
    INGESTED = "INGESTED", "ingested (checksum verified)"
    INDEXED = "INDEXED", "indexed (CDX written)"
    TRANSFERRED = "TRANSFERRED", "transferred (in archive storage, PATH line written)"
    BACKED_UP = "BACKED_UP", "backed up (replica verified, or no backup location configured)"
    CLEANED = "CLEANED", "done (spool copy removed)"
    FAILED = "FAILED", "failed (see error)"


class ArchiveFile(models.Model):
    KINDS = [("warc", "WARC"), ("metadata", "metadata WARC")]

    name = models.CharField(max_length=255, unique=True, help_text="Unique across the archive.")
    kind = models.CharField(max_length=10, choices=KINDS, default="warc")
    job = models.ForeignKey("harvest.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="files")
    harvest = models.ForeignKey(
        "harvest.HarvestDefinition", null=True, blank=True, on_delete=models.PROTECT, related_name="files"
    )
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64, help_text="As computed here from the bytes.")
    harvester_sha256 = models.CharField(max_length=64, blank=True, help_text="As reported by the harvester.")
    spool_path = models.CharField(max_length=1000, blank=True, help_text="Where the harvester left it.")
    index_state = models.CharField(
        max_length=12, choices=IndexState.choices, default=IndexState.HARVESTED, db_index=True
    )
    cdx_path = models.CharField(max_length=1000, blank=True)
    records = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    failed_step = models.CharField(
        max_length=12,
        blank=True,
        choices=IndexState.choices,
        help_text="The state a FAILED file goes back to when retried.",
    )
    attempts = models.PositiveIntegerField(default=0, help_text="Failed attempts since the last success.")
    claim_token = models.CharField(max_length=32, blank=True, help_text="The worker doing the next step.")
    claimed_until = models.DateTimeField(null=True, blank=True, help_text="Its lease; expired = free again.")
    queued_at = models.DateTimeField(null=True, blank=True, help_text="Last handed to the indexer queue.")
    merged_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When its CDX and PATH lines went into a daily merge; null = not yet (or reindexed since).",
    )
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ArchiveFileCopy(models.Model):
    """One stored copy of an archive file in one storage location (primary or replica)."""

    file = models.ForeignKey(ArchiveFile, on_delete=models.PROTECT, related_name="copies")
    location = models.CharField(max_length=200, help_text="The storage location's name.")
    path = models.CharField(max_length=1000)
    is_replica = models.BooleanField(default=False)
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_ok = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["file", "location"], name="archivefilecopy_unique")]

    def __str__(self) -> str:
        return f"{self.file.name} in {self.location}"
