"""``python -m harvester.testsite --port 8001 [--peer-port 8002]``: serve the demo site."""

from __future__ import annotations

import argparse
import signal
import sys

from harvester.testsite import TestSiteServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harvester.testsite")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--peer-port", type=int, default=None, help="the sister site's port ({{PEER}})")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    server = TestSiteServer(args.port, args.peer_port, args.verbose)
    # A process manager (netharvest up, honcho) stops us with SIGTERM: that is a clean exit, like Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    print(f"serving the netharvest test site on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
