"""The OpenEnv HTTP/WebSocket server of dcops (``dcops serve``, ``make run``).

- :mod:`dcops.server.app`: the FastAPI factory ``create_app``, the ``app`` object and ``main`` (endpoints there).
- :mod:`dcops.server.adapters`: JSON actions ↔ environment actions and observations, one adapter per task family.
- :mod:`dcops.server.sessions`: sessions (one environment each), limits, idle expiry, error codes.
- :mod:`dcops.server.store`: the SQLite episode store and the JSONL export.
- :mod:`dcops.server.mcp`: the JSON-RPC 2.0 (MCP) endpoint.
- ``web/``: the console served at ``/web/`` (plain HTML, CSS and JavaScript; no build step).

The environments know nothing of HTTP: everything wire-specific lives here and in :mod:`dcops.models`.
"""
