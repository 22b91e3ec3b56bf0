#!/usr/bin/env python3
"""The newcomer's two commands, on a machine with nothing but Python 3.11:

    python3 deploy/dev.py up      # the whole stack on the embedded default, until Ctrl-C
    python3 deploy/dev.py test    # the full test suite

Each makes (or refreshes) the project's virtual environment in .venv first, then runs
``netharvest up`` or ``pytest`` inside it; any further arguments are passed on.
(``python3 deploy/dev.py install`` only makes the environment.)

``test`` runs the suite in two pytest-xdist processes (``-n 2``): most of its time is the full-stack tests
waiting on real workers, which overlap well; each process gets a database and a Redis database of its own
(tests/settings.py). Pass ``-n`` yourself to choose, ``-n 0`` for one process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".netharvest-installed"
#: pywb, the replay service (deploy/replay_server.py, started by `netharvest up`) and the indexer tests' judge,
#: in its own environment: pywb 2.10 pins redis==2.10.6, which Celery's Redis transport (redis>=4.5) cannot
#: share one with.
PYWB = "pywb==2.10.0"
#: Installed beside pywb: boto3 lets it read s3:// paths (WARCs in an object store, docs/DESIGN.md "Storage: object
#: stores and harvester-side delivery"); added to an existing pywb environment without rebuilding it.
PYWB_EXTRAS = ("boto3>=1.35.2,<2",)
PYWB_STAMP = " ".join((PYWB, *PYWB_EXTRAS))
PYWB_VENV = VENV / "tools" / "pywb"


def ensure_venv() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"netharvest needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        print(f"creating the virtual environment in {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing netharvest and its dependencies (once; again only when pyproject.toml changes)", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", f"{ROOT}[test]"], check=True)
    ensure_pywb()
    STAMP.write_text(wanted)


def ensure_pywb() -> None:
    stamp = PYWB_VENV / ".installed"
    installed = stamp.read_text() if stamp.exists() else ""
    if installed == PYWB_STAMP:
        return
    py = PYWB_VENV / ("Scripts" if os.name == "nt" else "bin") / "python"
    pip = [str(py), "-m", "pip", "--disable-pip-version-check", "-q", "install"]
    if installed != PYWB:
        print(f"installing {PYWB} in {PYWB_VENV} (the replay service)", flush=True)
        venv.create(PYWB_VENV, with_pip=True, clear=True)
        subprocess.run([*pip, PYWB], check=True)
    subprocess.run([*pip, *PYWB_EXTRAS], check=True)
    stamp.write_text(PYWB_STAMP)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("up", "test", "install"):
        print(__doc__)
        return 2
    ensure_venv()
    if argv[0] == "install":
        return 0
    command, rest = argv[0], argv[1:]
    os.chdir(ROOT)
    if command == "up":
        args = [str(BIN / "netharvest"), "up", *rest]
    else:
        workers = [] if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in rest) else ["-n", "2"]
        args = [str(BIN / "python"), "-m", "pytest", *workers, *rest]
    os.execv(args[0], args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
