"""A loopback HTTP server for the preload benchmark's redirect probes: answers every request at once,
with a 301 to ``www.<name>-moved.com`` for hosts whose first label ends in 5 (10 % of the benchmark's
names), 200 otherwise.

    python -m tests.preload.http_server --port 18080
"""

from __future__ import annotations

import argparse
import asyncio


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    host = ""
    for line in head.decode("latin-1").split("\r\n")[1:]:
        if line.lower().startswith("host:"):
            host = line[5:].strip().split(":")[0]
    first = host.removeprefix("www.").split(".")[0]
    if first.endswith("5"):
        response = f"HTTP/1.1 301 Moved\r\nLocation: http://www.{first}-moved.com/\r\nContent-Length: 0\r\n\r\n"
    else:
        response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    writer.write(response.encode("ascii"))
    try:
        await writer.drain()
    except ConnectionError:
        pass
    writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="a loopback HTTP server for the preload benchmark")
    parser.add_argument("--port", type=int, default=18080)
    args = parser.parse_args()

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", args.port, backlog=4096)
        print(f"serving HTTP on 127.0.0.1:{args.port}", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
