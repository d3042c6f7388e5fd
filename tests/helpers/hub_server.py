"""A local stand-in for the Hugging Face Hub that serves published-layout folders over HTTP, for tests
that load by repo id through the libraries' own online code (``HF_ENDPOINT=server.endpoint``).

``root/datasets/<org>/<name>/`` and ``root/spaces/<org>/<name>/`` are repos at one commit. The server
answers what ``datasets.load_dataset`` and ``evaluate.load`` ask of a public repo: a file at
``/<kind>/<id>/resolve/<revision>/<path>`` (HEAD and GET, with ``X-Repo-Commit`` and ``ETag`` as the Hub
sends them; a missing file is a 404 ``EntryNotFound``), ``/api/<kind>/<id>/revision/<revision>`` and
``/api/<kind>/<id>/tree/<revision>/<folder>[?recursive=true]`` (the listings ``HfFileSystem`` globs data
files with).
"""
from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import urllib.parse
from pathlib import Path

COMMIT = hashlib.sha1(b"lgip published layout").hexdigest()
RESOLVE = re.compile(r"^/(datasets|spaces)/([^/]+/[^/]+)/resolve/[^/]+/(.+)$")
API = re.compile(r"^/api/(datasets|spaces)/([^/]+/[^/]+)/(revision|tree)/[^/]+/?(.*)$")


class HubServer:
    """``with HubServer(root) as hub:`` serves ``root`` on ``hub.endpoint`` until the block ends."""

    def __init__(self, root: Path):
        handler = type("Handler", (_Handler,), {"root": Path(root)})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "HubServer":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    root: Path

    def log_message(self, *args) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        url = urllib.parse.urlparse(self.path)
        path = urllib.parse.unquote(url.path)
        if match := RESOLVE.match(path):
            kind, repo, rel = match.groups()
            file = self.root / kind / repo / rel
            if not file.is_file():
                return self._send(404, b"{}", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT}, send_body)
            data = file.read_bytes()
            return self._send(200, data, {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha1(data).hexdigest()}"'},
                              send_body)
        if match := API.match(path):
            kind, repo, what, rel = match.groups()
            base = self.root / kind / repo
            if what == "revision":
                files = sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file())
                body = {"id": repo, "sha": COMMIT, "private": False, "siblings": [{"rfilename": f} for f in files]}
                return self._send(200, json.dumps(body).encode(), {"Content-Type": "application/json"}, send_body)
            if (base / rel).is_dir():
                recursive = urllib.parse.parse_qs(url.query).get("recursive") == ["true"]
                body = [_entry(base, p) for p in sorted((base / rel).rglob("*") if recursive else (base / rel).iterdir())]
                return self._send(200, json.dumps(body).encode(), {"Content-Type": "application/json"}, send_body)
        self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"}, send_body)

    def _send(self, status: int, body: bytes, headers: dict, send_body: bool) -> None:
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(key, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


def _entry(base: Path, path: Path) -> dict:
    """One item of a Hub tree listing."""
    rel = path.relative_to(base).as_posix()
    if path.is_dir():
        return {"type": "directory", "path": rel, "oid": "0" * 40}
    data = path.read_bytes()
    return {"type": "file", "path": rel, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
