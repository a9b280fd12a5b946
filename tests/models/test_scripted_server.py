"""The scripted HTTP server helper itself: order, recording, exhaustion, delays."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from models.scripted_server import Scripted, ScriptedServer


def post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_replays_in_order_records_requests_and_reports_exhaustion() -> None:
    with ScriptedServer([Scripted.json({"n": 1})]) as server:
        server.enqueue(Scripted(status=503, body=b"down"))
        assert post(server.base_url + "/x", b'{"a": 1}') == (200, b'{"n": 1}')
        assert post(server.base_url + "/y", b"raw") == (503, b"down")
        status, body = post(server.base_url + "/z", b"")
        assert status == 500 and json.loads(body) == {"error": "script exhausted"}
        assert server.unexpected == 1
        assert [r.path for r in server.requests] == ["/v1/x", "/v1/y", "/v1/z"]
        assert server.requests[0].json() == {"a": 1}
        assert server.requests[0].at <= server.requests[1].at <= server.requests[2].at


def test_each_server_gets_its_own_port() -> None:
    with ScriptedServer() as a, ScriptedServer() as b:
        assert a.port != b.port
        assert a.base_url.startswith("http://127.0.0.1:")
