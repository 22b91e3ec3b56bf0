"""``netharvest up``: the whole stack on this machine, from deploy/Procfile, until Ctrl-C.

Web, beat, a high- and a low-priority harvester worker, a worker for continuous harvests, the indexer,
replay (pywb, loopback only, behind the web UI's /replay/) and the page QA worker (headless Chromium, niced,
queue qa), as real processes on real
queues: on the embedded default (SQLite + the filesystem broker in the data directory) or on
PostgreSQL + Redis when NETHARVEST_DATABASE_URL / NETHARVEST_BROKER_URL are set. A process that dies on its
own is started again, a crash loop stops the stack (orchestrator/supervisor.py). Ctrl-C (or SIGTERM) stops
every process group and waits for them; nothing is left running.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from honcho.environ import parse_procfile

from harvester.runtime import broker_url
from orchestrator import services
from orchestrator.harvest.archive.replay import refresh
from orchestrator.harvest.curation.demo import ensure_demo_definition
from orchestrator.harvest.qa.browser import chromium_problem
from orchestrator.supervisor import Supervisor


def _port_free(port: int) -> bool:
    """Whether a server can listen on ``port`` now. SO_REUSEADDR, as the servers set it: the connections of a
    stack just stopped, in TIME_WAIT for a minute, do not keep a listener out, and must not make `up` refuse."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


PROCFILE = Path(__file__).resolve().parents[4] / "deploy" / "Procfile"
ADMIN_PASSWORD_FILE = "admin-password"


class Command(BaseCommand):
    help = (
        "Start the whole netharvest stack on this machine (web, beat, high- and low-priority and continuous "
        "harvester workers, indexer, replay, page QA) and stop it all on Ctrl-C."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--bind",
            default=os.environ.get("NETHARVEST_BIND", "127.0.0.1:8000"),
            help="address of the web UI (default 127.0.0.1:8000)",
        )
        parser.add_argument("--only", default="", help="comma-separated process names to run (default: all)")
        parser.add_argument("--procfile", default=str(PROCFILE), help="the Procfile to run")
        parser.add_argument(
            "--demo",
            action=argparse.BooleanOptionalAction,
            default=os.environ.get("NETHARVEST_DEMO", "1") not in ("0", "false", "no"),
            help="serve the bundled test site on 127.0.0.1 (two hosts) and add a selective "
            "harvest definition of it, due at once (default: on; NETHARVEST_DEMO=0 or "
            "--no-demo turns it off)",
        )
        parser.add_argument(
            "--replay-bind",
            default=os.environ.get("NETHARVEST_REPLAY_BIND", "127.0.0.1:8090"),
            help="address of the replay service (pywb), which only the web UI talks to: keep it "
            "on loopback (default 127.0.0.1:8090)",
        )
        parser.add_argument(
            "--dedup-bind",
            default=os.environ.get("NETHARVEST_DEDUP_BIND", "127.0.0.1:8095"),
            help="address of the dedup service, which the harvesters and the indexer use (default 127.0.0.1:8095)",
        )
        parser.add_argument(
            "--demo-port",
            type=int,
            default=8001,
            help="first port of the demo site; its sister host is on the next port (default 8001)",
        )

    def handle(self, *args: object, **options: object) -> None:
        procfile = Path(str(options["procfile"]))
        if not procfile.is_file():
            raise CommandError(f"{procfile}: no such Procfile")
        processes = parse_procfile(procfile.read_text()).processes
        only = [name.strip() for name in str(options["only"]).split(",") if name.strip()]
        unknown = set(only) - set(processes)
        if unknown:
            raise CommandError(
                f"unknown process(es) {', '.join(sorted(unknown))}; the Procfile has {', '.join(processes)}"
            )

        call_command("migrate", verbosity=0, interactive=False)
        login = self._ensure_admin()
        demo_line = ""
        if options["demo"]:
            port = int(options["demo_port"])  # type: ignore[call-overload]
            busy = [p for p in (port, port + 1) if not _port_free(p)]
            if busy:
                # A demo site that cannot bind would die and be restarted until the stack stops: say so first.
                raise CommandError(
                    f"the demo site needs ports {port} and {port + 1} on 127.0.0.1, but "
                    f"{', '.join(map(str, busy))} is in use: choose others with --demo-port N, "
                    "or leave the demo out with --no-demo"
                )
            definition, created = ensure_demo_definition(port, port + 1)
            state = "due now" if created else "already made: `netharvest harvests run-now` runs it again"
            demo_line = (
                f"  demo            http://127.0.0.1:{port}/ and :{port + 1}/, harvest definition "
                f"{definition.name!r} ({state})\n"
            )

        replay_line, replay_bind, replay = self._replay(
            processes, only, str(options["replay_bind"]), str(options["bind"])
        )
        qa_line, qa = self._qa(processes, only, str(options["bind"]))
        dedup_line, dedup_url, dedup = self._dedup(processes, only, str(options["dedup_bind"]))

        env = dict(os.environ)
        # The venv's scripts (celery, gunicorn) must be found even when the venv is not activated.
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(
            NETHARVEST_DATA_DIR=str(settings.DATA_DIR),
            NETHARVEST_BIND=str(options["bind"]),
            DJANGO_SETTINGS_MODULE="orchestrator.settings",
            PYTHONUNBUFFERED="1",
            NETHARVEST_INDEX_DIR=str(settings.NETHARVEST_INDEX_DIR),
            NETHARVEST_REPLAY_BIND=replay_bind,
            NETHARVEST_REPLAY_URL=f"http://{replay_bind}",
            NETHARVEST_DEDUP_BIND=str(options["dedup_bind"]),
        )
        # Set even when empty (no service: the SQLite index), so no child falls back to an older record; and
        # recorded for the commands run from other shells (`harvests run-now` makes JobSpecs naming the dedup
        # service): orchestrator/services.py.
        env["NETHARVEST_DEDUP_URL"] = dedup_url
        services.record(settings.DATA_DIR, env)
        # The web server needs a key from the environment (orchestrator/security.py): this stack's own,
        # the one made once in its data directory, unless one was given.
        if not env.get("NETHARVEST_SECRET_KEY", "").strip():  # unset, or empty as in the example env file
            env["NETHARVEST_SECRET_KEY"] = settings.SECRET_KEY
        db = settings.DATABASES["default"]
        self.stdout.write(
            f"netharvest up\n"
            f"  data directory  {settings.DATA_DIR}\n"
            f"  database        {db['ENGINE'].rsplit('.', 1)[-1]} {db['NAME']}\n"
            f"  broker          {broker_url()}\n"
            f"  web UI          http://{options['bind']}/   {login}\n"
            f"{replay_line}"
            f"{qa_line}"
            f"{dedup_line}"
            f"{demo_line}"
            f"  Ctrl-C stops everything.\n"
        )
        self.stdout.flush()

        manager = Supervisor()
        cwd = str(Path(__file__).resolve().parents[4])
        for name, command in processes.items():
            if (
                (not only or name in only)
                and (name != "replay" or replay)
                and (name != "qa" or qa)
                and (name != "dedup" or dedup)
            ):
                manager.add_process(name, command, env=env, cwd=cwd)
        if options["demo"]:
            for name, site, peer in (("demo-site", port, port + 1), ("demo-peer", port + 1, port)):
                manager.add_process(
                    name,
                    f"exec {sys.executable} -m harvester.testsite --port {site} --peer-port {peer}",
                    env=env,
                    cwd=cwd,
                )
        manager.loop()
        # Asked to stop (Ctrl-C, SIGTERM) and every process stopped cleanly: that is success.
        clean = all(p.get("returncode") == 0 for p in manager._processes.values())
        stopped_on_request = manager.returncode in (130, 143)
        if stopped_on_request and clean:
            self.stdout.write("netharvest stopped; every process shut down cleanly.")
            sys.exit(0)
        sys.exit(manager.returncode or 1)

    def _replay(self, processes: dict[str, object], only: list[str], bind: str, web: str) -> tuple[str, str, bool]:
        """The replay line to print, pywb's address, and whether to start it. pywb runs from its own environment
        (deploy/dev.py install makes it); without it the stack runs without replay and says so. Its links are up
        to date before it starts (orchestrator.harvest.archive.replay.refresh)."""
        host, _, port = bind.rpartition(":")
        if not host or not port.isdigit():
            raise CommandError(f"--replay-bind {bind!r}: expected HOST:PORT, e.g. 127.0.0.1:8090")
        if "replay" not in processes or (only and "replay" not in only):
            return "", bind, False
        python = Path(os.environ.get("NETHARVEST_PYWB_PYTHON", PROCFILE.parents[1] / ".venv/tools/pywb/bin/python"))
        if not python.exists():
            return (
                (
                    f"  replay          not started: pywb is not installed ({python}; python3 deploy/dev.py install "
                    "makes it)\n"
                ),
                bind,
                False,
            )
        if host in ("127.0.0.1", "localhost") and not _port_free(int(port)):
            raise CommandError(
                f"the replay service needs {bind}, which is in use: choose another with --replay-bind 127.0.0.1:PORT"
            )
        refresh()
        warning = "" if host in ("127.0.0.1", "localhost", "::1") else "  (NOT loopback: firewall it!)"
        return (
            (
                f"  replay          http://{web}/replay/all/<url>   (through the web UI, after login; pywb itself "
                f"on {bind}{warning})\n"
            ),
            bind,
            True,
        )

    def _dedup(self, processes: dict[str, object], only: list[str], bind: str) -> tuple[str, str, bool]:
        """The dedup line to print, the address every process is given (NETHARVEST_DEDUP_URL) and whether to
        start the service: this stack's own, unless NETHARVEST_DEDUP_URL already names one elsewhere."""
        host, _, port = bind.rpartition(":")
        if not host or not port.isdigit():
            raise CommandError(f"--dedup-bind {bind!r}: expected HOST:PORT, e.g. 127.0.0.1:8095")
        # Given in the environment: a service elsewhere. (Not settings.NETHARVEST_DEDUP_URL: that may be this
        # stack's own address, recorded by an earlier `up`, and this one must start its service again.)
        given = os.environ.get("NETHARVEST_DEDUP_URL", "").strip()
        if given or "dedup" not in processes or (only and "dedup" not in only):
            url = given
            return f"  dedup           {url or settings.NETHARVEST_DEDUP_INDEX}\n", url, False
        if host in ("127.0.0.1", "localhost") and not _port_free(int(port)):
            raise CommandError(
                f"the dedup service needs {bind}, which is in use: choose another with --dedup-bind 127.0.0.1:PORT"
            )
        url = f"http://{bind}"
        if settings.NETHARVEST_DEDUP_INDEX.is_file():
            hint = f" (an older SQLite index is at {settings.NETHARVEST_DEDUP_INDEX}: `netharvest index dedup-load`)"
        else:
            hint = ""
        store = f"{settings.NETHARVEST_INDEX_DIR}/dedup.rocksdb"
        return f"  dedup           {url}   (service over {store}){hint}\n", url, True

    def _qa(self, processes: dict[str, object], only: list[str], web: str) -> tuple[str, bool]:
        """The page QA line to print and whether to start the qa worker. It drives Chromium
        (NETHARVEST_QA_CHROMIUM); without it the stack runs without page QA and says how to install it, instead
        of a worker whose every pass fails."""
        if "qa" not in processes or (only and "qa" not in only):
            return "", False
        problem = chromium_problem(settings.NETHARVEST_QA_CHROMIUM)
        if problem:
            return f"  page QA         not started: {problem}\n", False
        return (
            f"  page QA         http://{web}/jobs/<id>/qa/   (worker on queue qa, Chromium "
            f"{settings.NETHARVEST_QA_CHROMIUM})\n"
        ), True

    def _ensure_admin(self) -> str:
        """The first start creates an administrator and keeps its password in the data directory."""
        users = get_user_model()
        password_file = settings.DATA_DIR / ADMIN_PASSWORD_FILE
        if not users.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser("admin", "", password)
            tmp = password_file.with_suffix(".tmp")
            tmp.write_text(password + "\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, password_file)
        if password_file.exists() and users.objects.filter(username="admin", is_superuser=True).exists():
            return f"login: admin / {password_file.read_text().strip()}"
        return "login: your administrator account"
