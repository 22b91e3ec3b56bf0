"""The embedded broker: kombu's filesystem transport, made safe for several processes.

kombu's own transport writes a message in place under its final ``*.msg`` name, so a worker polling
the folder can take the file before its bytes are written, read nothing and die on a JSON error (seen
with `netharvest up`: the indexer worker stopped for good). Here a message is written under a name the
readers ignore and renamed into place when complete, and a reader claims a message by an atomic
``os.rename`` into the processed folder on the same file system (kombu's ``shutil.move`` to the system
temp directory may be a copy, which two readers can both win). Registered under the ``filesystem://``
scheme by harvester.runtime, so every process of the stack uses it.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

PARTIAL_PREFIX = ".partial-"  # a reader's queue filter never matches a name starting with a dot


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        partial = os.path.join(self.data_folder_out, PARTIAL_PREFIX + name)
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise filesystem.ChannelError(f"cannot add message {name!r} to {self.data_folder_out}") from exc

    def _get(self, queue: str) -> Any:
        wanted = f"{queue}.msg"
        claimed_dir = self.processed_folder
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.startswith(".") or name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(claimed_dir, f"{os.getpid()}-{name}")
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another process took it first
            try:
                with open(claimed, "rb") as f:
                    payload = f.read()
                if not self.store_processed:
                    os.remove(claimed)
            except OSError as exc:
                raise filesystem.ChannelError(f"cannot read message {claimed!r}") from exc
            return loads(bytes_to_str(payload))
        raise filesystem.Empty()


class Transport(filesystem.Transport):
    Channel = Channel

    @property
    def default_connection_params(self) -> dict[str, object]:
        """No default host: a queue in a directory has none, and kombu's default ("localhost") made it warn "No
        hostname was supplied" on stderr for every connection of ``filesystem://``, i.e. in every command a
        newcomer runs on the embedded default (``netharvest harvests run-now`` …)."""
        return {}
