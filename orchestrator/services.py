"""The service addresses `netharvest up` gives its processes, recorded in the data directory for every other
process of the same install.

`up` starts the dedup service and replay on addresses of its choosing (``--dedup-bind``, ``--replay-bind``) and
gives them to its children in the environment. A command run from another shell (``netharvest harvests run-now``,
``netharvest jobs qa --here``) does not have that environment: without this record it generated JobSpecs naming
the SQLite dedup index, which nothing feeds while the service runs, so a re-harvest stored every response again
and no revisit. `up` writes ``services.json`` in the data directory at each start; settings read it for a variable
the environment leaves unset (the environment always wins; production configures every process from it).

No Django here: orchestrator.settings reads this before Django is set up.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

SERVICES_FILE = "services.json"
#: The variables `up` records: the addresses its processes are given.
RECORDED = ("NETHARVEST_DEDUP_URL", "NETHARVEST_REPLAY_URL")


def record(data_dir: Path, values: dict[str, str]) -> Path:
    """Write ``values`` (only the RECORDED names) atomically to the data directory's services file."""
    path = Path(data_dir) / SERVICES_FILE
    body = {name: values.get(name, "") for name in RECORDED}
    fd, tmp = tempfile.mkstemp(prefix=".services.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(body, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def recorded(data_dir: Path) -> dict[str, str]:
    """What `up` last recorded in the data directory; {} when it never ran there (or the file is unreadable:
    a damaged record must not stop a command that does not need it)."""
    try:
        body = json.loads((Path(data_dir) / SERVICES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(body, dict):
        return {}
    return {name: str(body[name]).strip() for name in RECORDED if isinstance(body.get(name), str)}


def setting(name: str, data_dir: Path, default: str) -> str:
    """The environment's value of ``name`` when it is set (even empty: set empty means none); else what `up`
    recorded in ``data_dir``; else ``default``."""
    if name in os.environ:
        return os.environ[name].strip()
    return recorded(data_dir).get(name, default)
