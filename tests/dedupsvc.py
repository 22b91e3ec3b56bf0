"""A real dedup service process on 127.0.0.1 for tests (indexer/dedupservice.py), started and stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from indexer.dedupclient import DedupClient, DedupServiceError
from tests.conftest import free_port, wait_for

ROOT = Path(__file__).resolve().parent.parent


class ServiceProcess:
    def __init__(self, store: Path, port: int | None = None) -> None:
        self.store = store
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "indexer.dedupservice",
                "serve",
                "--store",
                str(store),
                "--bind",
                f"127.0.0.1:{self.port}",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        client = DedupClient(self.url)

        def up() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"dedup service exited: {self.proc.stdout.read() if self.proc.stdout else ''}")
            try:
                return bool(client.health()["ok"])
            except DedupServiceError:
                return False

        try:
            wait_for(up, 20, "the dedup service to answer /health")
        finally:
            client.close()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()
