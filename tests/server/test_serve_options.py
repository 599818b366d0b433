"""What ``dcops serve`` hands uvicorn: WebSocket compression only when the operator asks for it."""

from __future__ import annotations

import argparse

import pytest

from dcops.server import app as server_app
from dcops.server.config import ServerConfig, add_serve_arguments


@pytest.mark.parametrize(("value", "expected"), [(None, False), ("0", False), ("1", True)])
def test_websocket_compression_follows_dcops_ws_compression(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("DCOPS_WS_COMPRESSION", raising=False)
    else:
        monkeypatch.setenv("DCOPS_WS_COMPRESSION", value)
    assert ServerConfig.from_env().ws_compression is expected
    seen = {}
    monkeypatch.setattr("uvicorn.run", lambda application, **kwargs: seen.update(kwargs))
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    assert server_app.serve(parser.parse_args(["--db", "off", "--port", "8123"])) == 0
    assert seen["ws_per_message_deflate"] is expected and seen["port"] == 8123
