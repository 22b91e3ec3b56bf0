"""The harvest database, after NetarchiveSuite's (shared/seeds/001…, 2.3.3), improved where its users
asked: typed crawl templates instead of opaque order.xml blobs, channels as first-class rows, and
every job-status change a conditional UPDATE so concurrent processes never double-act."""

from orchestrator.harvest.models.archive import ArchiveFile, ArchiveFileCopy
from orchestrator.harvest.models.definitions import HarvestChannel, HarvestDefinition
from orchestrator.harvest.models.domains import (
    ConfigurationSeedList,
    Domain,
    DomainConfiguration,
    ExtendedField,
    GlobalCrawlerTrapList,
    SeedList,
)
from orchestrator.harvest.models.jobs import (
    HarvestInfo,
    Job,
    JobControl,
    JobDomain,
    JobStatus,
    ReaperSight,
    StopReason,
)
from orchestrator.harvest.models.jobstats import JobStats
from orchestrator.harvest.models.pageqa import MissingResource, QAMark, QAPage, QARun, QARunStatus
from orchestrator.harvest.models.progress import ProgressSample
from orchestrator.harvest.models.schedules import Schedule
from orchestrator.harvest.models.templates import CrawlTemplate

__all__ = [
    "ArchiveFile",
    "ArchiveFileCopy",
    "ConfigurationSeedList",
    "CrawlTemplate",
    "Domain",
    "DomainConfiguration",
    "ExtendedField",
    "GlobalCrawlerTrapList",
    "HarvestChannel",
    "HarvestDefinition",
    "HarvestInfo",
    "Job",
    "JobControl",
    "JobDomain",
    "JobStats",
    "JobStatus",
    "MissingResource",
    "ProgressSample",
    "QAMark",
    "QAPage",
    "QARun",
    "QARunStatus",
    "ReaperSight",
    "Schedule",
    "SeedList",
    "StopReason",
]
