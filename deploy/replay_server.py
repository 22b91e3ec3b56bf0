"""netharvest's replay service: pywb over the archive's master CDX + PATH index, mounted at /replay.

Run with pywb's Python (its own virtual environment: pywb 2.10 pins redis==2.10.6, which Celery's Redis
transport cannot share one with; ``deploy/dev.py install`` makes ``.venv/tools/pywb``, the replay image
installs pywb on its own):

    .venv/tools/pywb/bin/python deploy/replay_server.py --index-dir DIR [--bind 127.0.0.1:8090]

It imports nothing of netharvest but indexer/replaylayout.py (the layout the orchestrator keeps up to date),
writes pywb's config.yaml for that layout and serves pywb's own application under the prefix ``/replay``
(as WSGI's SCRIPT_NAME), so the URLs pywb writes into replayed pages go back through the web UI, which proxies
``/replay/…`` here after its login and role check. It must never listen where users reach it directly: the
default address is loopback; in docker compose it is on the internal network only (docker-compose.yml).
"""

from gevent.monkey import patch_all

patch_all()

import argparse  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # indexer/replaylayout.py, nothing else

from indexer.replaylayout import ALL, URL_PREFIX, ReplayLayout  # noqa: E402

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def mounted(app: WSGIApp, prefix: str) -> WSGIApp:
    """``app`` served under ``prefix``: requests must start with it (anything else is 404), and pywb sees it as
    SCRIPT_NAME, so its links, redirects and framed replay all carry it."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path != prefix and not path.startswith(prefix + "/"):
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [f"the replay service answers under {prefix}/ only\n".encode()]
        environ["SCRIPT_NAME"] = prefix
        environ["PATH_INFO"] = path[len(prefix) :] or "/"
        uri = environ.get("REQUEST_URI")
        if uri and uri.startswith(prefix):
            environ["REQUEST_URI"] = uri[len(prefix) :] or "/"
        return app(environ, start_response)

    return wrapped


def resolve_revisits_in_all(layout: ReplayLayout) -> None:
    """A revisit whose original another harvest definition captured (the dedup index is the archive's, not a
    definition's) resolves in a definition's collection too: pywb looks for the original in the collection
    being replayed, and, finding none there, now in ``all``. The revisit is the definition's capture; the
    payload it stands for is simply stored elsewhere."""
    from pywb.utils.wbexception import NotFoundException
    from pywb.warcserver.index.aggregator import CacheDirectoryIndexSource
    from pywb.warcserver.resource.resolvingloader import ResolvingLoader

    everything = CacheDirectoryIndexSource(base_prefix=str(layout.collections), base_dir=f"{ALL}/indexes/")
    in_collection = ResolvingLoader.load_cdx_for_dupe

    def load_cdx_for_dupe(
        self: ResolvingLoader, url: str, timestamp: str, digest: str, cdx_loader: Callable[..., Any]
    ) -> Iterable[Any]:
        try:
            found = list(in_collection(self, url, timestamp, digest, cdx_loader))
        except NotFoundException:
            found = []
        if found:
            return iter(found)
        filters = ["!mime:warc/revisit"] + ([f"digest:{digest}"] if digest and digest != "-" else [])
        cdx_iter, _ = everything({"url": url, "closest": timestamp, "filter": filters})
        return cdx_iter or iter([])

    ResolvingLoader.load_cdx_for_dupe = load_cdx_for_dupe  # type: ignore[method-assign]


def replay_not_modified_as_the_original() -> None:
    """A server-not-modified revisit (the 304 a conditional GET of a re-harvest got) replays as the capture it
    stands for: the original's status, headers and payload. pywb (since 2.7) answers with the revisit's own
    headers when it has any, and loads no payload for a 3xx one, so every image or stylesheet of a re-harvest
    that the server answered 304 replayed as an empty 304: broken images in the second job's pages. The WARC
    keeps the 304 as it was exchanged (WARC 1.1, 6.7.3); only what replay serves for it changes. Other
    revisits keep pywb's handling (a redirect's own headers, pywb's reason for using them)."""
    from pywb.utils.io import no_except_close
    from pywb.utils.wbexception import NotFoundException
    from pywb.warcserver.resource.resolvingloader import ResolvingLoader
    from warcio.recordloader import ArchiveLoadFailed

    load = ResolvingLoader.load_headers_and_payload

    def load_headers_and_payload(self: ResolvingLoader, cdx: Any, failed_files: Any, cdx_loader: Any) -> Any:
        headers, payload = load(self, cdx, failed_files, cdx_loader)
        # pywb answers any 3xx revisit with its own headers and no payload (right for a redirect).
        if (
            headers is None
            or headers is not payload
            or headers.rec_type != "revisit"
            or not headers.http_headers
            or headers.http_headers.get_statuscode() != "304"
        ):
            return headers, payload
        try:
            original = self._load_different_url_payload(cdx, headers, failed_files, cdx_loader)
        except (ArchiveLoadFailed, NotFoundException):
            return headers, payload  # the original is not in the archive: the 304, as before
        no_except_close(headers.raw_stream)
        return original, original

    ResolvingLoader.load_headers_and_payload = load_headers_and_payload  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-dir", required=True, help="netharvest's index directory (NETHARVEST_INDEX_DIR)")
    parser.add_argument("--bind", default="127.0.0.1:8090", help="HOST:PORT to listen on (default 127.0.0.1:8090)")
    parser.add_argument("--no-framed", action="store_true", help="replay without pywb's top frame")
    args = parser.parse_args(argv)
    host, _, port = args.bind.rpartition(":")
    if not host or not port.isdigit():
        parser.error(f"--bind {args.bind!r}: expected HOST:PORT, e.g. 127.0.0.1:8090")

    # WARCs in an object store (s3:// in the PATH indexes): pywb's S3 loader makes a plain boto3 client, which
    # takes the endpoint from boto3's own variable; netharvest's setting names it for every part.
    if os.environ.get("NETHARVEST_S3_ENDPOINT_URL"):
        os.environ.setdefault("AWS_ENDPOINT_URL_S3", os.environ["NETHARVEST_S3_ENDPOINT_URL"])
    layout = ReplayLayout(args.index_dir)
    layout.ensure()
    layout.ensure_path_index()
    tmp = layout.config.with_name(layout.config.name + ".tmp")
    tmp.write_text(layout.pywb_config(framed=not args.no_framed))
    tmp.replace(layout.config)

    logging.basicConfig(format="%(asctime)s %(levelname)s replay: %(message)s", level=logging.INFO)
    import gevent
    from gevent.pywsgi import WSGIServer
    from pywb.apps.frontendapp import FrontEndApp
    from pywb.utils.geventserver import RequestURIWSGIHandler
    from pywb.warcserver.index import aggregator

    def quiet(*args: object, **kwargs: object) -> None:
        """pywb prints "Dir … unchanged" for every lookup of a collection; its other messages are kept."""
        if not (args and isinstance(args[0], str) and args[0].startswith("Dir ") and args[0].endswith(" unchanged")):
            print(*args, **kwargs)

    aggregator.print = quiet  # type: ignore[attr-defined]  # the module's name lookup finds this before builtins
    resolve_revisits_in_all(layout)
    replay_not_modified_as_the_original()
    app = FrontEndApp(config_file=str(layout.config))
    server = WSGIServer((host, int(port)), mounted(app, URL_PREFIX), handler_class=RequestURIWSGIHandler)
    for signum in (signal.SIGTERM, signal.SIGINT):  # a clean stop (exit 0) for `netharvest up` and docker
        gevent.signal_handler(signum, server.stop)
    logging.info("pywb on http://%s:%s%s/ over %s", host, port, URL_PREFIX, layout.index_dir)
    server.serve_forever()
    logging.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
