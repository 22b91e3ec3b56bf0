"""Storage locations and index paths, from the settings (the environment).

``NETHARVEST_STORAGE_LOCATIONS`` lists the archive's storage locations as ``name=/path`` or
``name=s3://bucket/prefix[?capacity=BYTES]`` pairs (an object store: indexer.objectstore) (the BnF's
"several possible locations given in a configuration file", shared/seeds/001…, 4.1); the transfer step
puts each WARC in the one with the most free space. ``NETHARVEST_BACKUP_LOCATION`` names an optional
replica location. Every path the chain writes under the index directory is named here, so the chain,
the merge and the command agree on one layout:

    <index>/cdx/<job>/<name>.cdx        one sorted CDX per WARC (kept: reindex and rebuild start from it)
    <index>/path/<job>/<name>.path      its PATH line
    <index>/daily/<stamp>.{cdx,path,files}   a merge's output, waiting for bigmerge
    <index>/master.cdx, master.path     the master indexes (replaced atomically)
    <index>/harvests/<definition id>.cdx     per-harvest-definition sub-indexes (collection entry points)
    <index>/dedup.sqlite3               the dedup index (NETHARVEST_DEDUP_INDEX)
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from indexer import objectstore
from indexer.objectstore import ObjectLocation
from indexer.transfer import Location

AnyLocation = Location | ObjectLocation


def parse_locations(text: str, variable: str, replica: bool = False, default_name: str = "") -> list[AnyLocation]:
    """``name=/path,name2=s3://bucket/prefix`` → Locations. A bare path is allowed where ``default_name`` is
    given."""
    locations: list[AnyLocation] = []
    for i, item in enumerate(part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, path = item.partition("=")
        if not sep:
            if not default_name:
                raise ImproperlyConfigured(f"{variable}: item {i + 1} ({item!r}) must be name=/absolute/path")
            name, path = default_name, item
        name, path = name.strip(), path.strip()
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise ImproperlyConfigured(
                f"{variable}: item {i + 1}: location name {name!r} must be letters, digits, - or _"
            )
        if objectstore.is_url(path):
            try:
                locations.append(objectstore.parse_location(name, path, replica=replica))
            except ValueError as exc:
                raise ImproperlyConfigured(f"{variable}: item {i + 1}: location {name}: {exc}") from None
        elif not Path(path).is_absolute():
            raise ImproperlyConfigured(f"{variable}: item {i + 1}: location {name} path {path!r} must be absolute")
        else:
            locations.append(Location(name, Path(path), replica=replica))
        if any(loc.name == name for loc in locations[:-1]):
            raise ImproperlyConfigured(f"{variable}: location name {name} is given twice")
    return locations


def primary_locations() -> list[AnyLocation]:
    """The configured storage locations (at least one)."""
    locations = parse_locations(settings.NETHARVEST_STORAGE_LOCATIONS, "NETHARVEST_STORAGE_LOCATIONS")
    if not locations:
        raise ImproperlyConfigured("NETHARVEST_STORAGE_LOCATIONS names no location")
    return locations


def backup_location() -> AnyLocation | None:
    """The replica location, or None when no backup is configured."""
    found = parse_locations(
        settings.NETHARVEST_BACKUP_LOCATION, "NETHARVEST_BACKUP_LOCATION", replica=True, default_name="backup"
    )
    if len(found) > 1:
        raise ImproperlyConfigured("NETHARVEST_BACKUP_LOCATION names more than one location")
    if found and any(loc.name == found[0].name for loc in primary_locations()):
        raise ImproperlyConfigured(f"NETHARVEST_BACKUP_LOCATION: {found[0].name} is also a storage location")
    return found[0] if found else None


def all_locations() -> dict[str, AnyLocation]:
    """Every configured location by name (primaries, then the backup)."""
    backup = backup_location()
    return {loc.name: loc for loc in [*primary_locations(), *([backup] if backup else [])]}


def index_dir() -> Path:
    return Path(settings.NETHARVEST_INDEX_DIR)


def dedup_index_path() -> Path:
    return Path(settings.NETHARVEST_DEDUP_INDEX)


def dedup_location() -> str:
    """What a JobSpec's ``dedup_index`` names: the dedup service's address when there is one, else the file."""
    return settings.NETHARVEST_DEDUP_URL or str(dedup_index_path())


def stored_path(location: AnyLocation, job_id: int | None, name: str) -> Path | str:
    """Where a WARC goes in a location: one directory (key prefix) per job, as the harvester's spool has."""
    job = str(job_id) if job_id else "nojob"
    if isinstance(location, ObjectLocation):
        return objectstore.join(location.url, job, name)
    return Path(location.path) / job / name


def fetch_path(job_id: int | None, name: str) -> Path:
    """Where the chain keeps a local copy of a file a harvester delivered to the object store, from ingest to
    delete (the CDX indexer reads a file)."""
    return index_dir() / "fetch" / (str(job_id) if job_id else "nojob") / name


def cdx_path(job_id: int | None, name: str) -> Path:
    return index_dir() / "cdx" / (str(job_id) if job_id else "nojob") / f"{name}.cdx"


def path_file(job_id: int | None, name: str) -> Path:
    return index_dir() / "path" / (str(job_id) if job_id else "nojob") / f"{name}.path"


def daily_dir() -> Path:
    return index_dir() / "daily"


def master_cdx() -> Path:
    return index_dir() / "master.cdx"


def master_path() -> Path:
    return index_dir() / "master.path"


def harvest_cdx(harvest_id: int) -> Path:
    return index_dir() / "harvests" / f"{harvest_id}.cdx"
