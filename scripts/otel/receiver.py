"""A test backend on 127.0.0.1 for continuous profiles: an OTLP/HTTP profiles receiver
(POST /v1development/profiles) and a Pyroscope ingest endpoint (POST /ingest), decoding with the official
definitions (decode.py), never with hprof-rs's code. One JSON line per request goes to OUT:
{"path", "query": {k: v}, "headers": {k: v}, "bytes": n, "decoded": {...}} (or "error").

Usage: receiver.py OUT PORT [--start-after SECONDS] [--start-on FILE] [--hang] [--stop-after SECONDS]
  --start-after: bind only after that long (a backend that is down at first);
  --start-on: bind only once FILE exists (a backend that is down until the test says);
  --hang: accept connections and never answer;
  --stop-after: exit by itself after that long (default 900; the tests kill it sooner).
"""

import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode  # noqa: E402

out_path, port = sys.argv[1], int(sys.argv[2])
args = sys.argv[3:]
start_after = float(args[args.index("--start-after") + 1]) if "--start-after" in args else 0
stop_after = float(args[args.index("--stop-after") + 1]) if "--stop-after" in args else 900
start_on = args[args.index("--start-on") + 1] if "--start-on" in args else None
hang = "--hang" in args
lock = threading.Lock()


def record(entry):
    with lock, open(out_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        url = urllib.parse.urlsplit(self.path)
        entry = {"path": url.path, "query": dict(urllib.parse.parse_qsl(url.query)),
                 "headers": {k.lower(): v for k, v in self.headers.items()}, "bytes": n, "time": time.time()}
        try:
            if url.path == "/v1development/profiles":
                entry["decoded"] = decode.otlp(body)
            elif url.path == "/ingest":
                entry["gzipped"] = body[:2] == b"\x1f\x8b"
                entry["decoded"] = decode.pprof(body)
            else:
                entry["error"] = "unknown path"
        except Exception as e:  # a decoding failure is the test's finding
            entry["error"] = repr(e)
        record(entry)
        self.send_response(200 if "error" not in entry else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()


threading.Timer(stop_after, lambda: os._exit(0)).start()
time.sleep(start_after)
while start_on and not os.path.exists(start_on):
    time.sleep(0.05)
if hang:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    print("listening", port, flush=True)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)  # never answered
else:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("listening", port, flush=True)
    server.serve_forever()
