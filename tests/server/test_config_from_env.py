"""``ServerConfig.from_env``: every ``DCOPS_*`` variable read as documented, its default when unset or empty,
and a bad value refused with a message naming the variable (the server never starts on a silent fallback)."""

from __future__ import annotations

import pytest

from dcops.server.config import DEFAULT_TASK, ServerConfig
from dcops.server.store import default_db_path

VARIABLES = ("DCOPS_DB", "DCOPS_MAX_SESSIONS", "DCOPS_SESSION_IDLE_S", "DCOPS_DB_SYNC", "DCOPS_STORE_OBS",
             "DCOPS_MAX_BODY_BYTES", "DCOPS_DEFAULT_TASK", "DCOPS_EPISODE_SECRET", "DCOPS_WORKERS",
             "DCOPS_OPERATOR_TOKEN", "DCOPS_RAY_ADDRESS", "DCOPS_WS_COMPRESSION")


@pytest.fixture
def env(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_when_nothing_is_set(env):
    config = ServerConfig.from_env()
    assert (config.max_sessions, config.session_idle_s, config.max_body_bytes, config.workers) == (64, 900.0, 2**20, 0)
    assert config.db_path == default_db_path() and config.db_sync == "NORMAL" and config.store_observations
    assert config.default_task == DEFAULT_TASK and config.operator_token is None and config.ray_address is None
    assert not config.ws_compression and len(config.episode_secret) >= 16


def test_empty_values_are_unset(env):
    for name in VARIABLES:
        env.setenv(name, "")
    config = ServerConfig.from_env()
    assert (config.max_sessions, config.session_idle_s, config.max_body_bytes, config.workers) == (64, 900.0, 2**20, 0)
    assert config.operator_token is None and config.ray_address is None and config.db_path == default_db_path()
    assert config.store_observations and not config.ws_compression  # an empty switch keeps its default too


def test_values_are_read(env):
    for name, value in (("DCOPS_MAX_SESSIONS", "1"), ("DCOPS_SESSION_IDLE_S", "0.001"), ("DCOPS_MAX_BODY_BYTES", "1024"),
                        ("DCOPS_WORKERS", "3"), ("DCOPS_OPERATOR_TOKEN", "tok"), ("DCOPS_RAY_ADDRESS", "auto"),
                        ("DCOPS_DB_SYNC", "FULL"), ("DCOPS_DEFAULT_TASK", "cooling/x"), ("DCOPS_WS_COMPRESSION", "1")):
        env.setenv(name, value)
    config = ServerConfig.from_env()
    assert (config.max_sessions, config.session_idle_s, config.max_body_bytes, config.workers) == (1, 0.001, 1024, 3)
    assert (config.operator_token, config.ray_address, config.db_sync, config.default_task) == (
        "tok", "auto", "FULL", "cooling/x")
    assert config.ws_compression


@pytest.mark.parametrize("value", ["0.001", "0.5", "60", "1e6"])
def test_the_idle_timeout_takes_any_value_from_its_minimum_up(env, value):
    """The minimum is a lower bound, not the only value allowed."""
    env.setenv("DCOPS_SESSION_IDLE_S", value)
    assert ServerConfig.from_env().session_idle_s == float(value)


@pytest.mark.parametrize(("value", "stored"), [("0", False), ("1", True), ("yes", True)])
def test_observations_are_stored_unless_switched_off(env, value, stored):
    env.setenv("DCOPS_STORE_OBS", value)
    assert ServerConfig.from_env().store_observations is stored


@pytest.mark.parametrize("value", ["off", "OFF", "none", "0"])
def test_the_store_can_be_switched_off(env, value):
    env.setenv("DCOPS_DB", value)
    assert ServerConfig.from_env().db_path is None


def test_a_database_path_keeps_the_default_location_rule(env):
    env.setenv("DCOPS_DB", "/tmp/somewhere.db")
    assert ServerConfig.from_env().db_path == default_db_path()  # default_db_path reads $DCOPS_DB itself


@pytest.mark.parametrize(("name", "value", "message"), [
    ("DCOPS_MAX_SESSIONS", "0", "DCOPS_MAX_SESSIONS must be >= 1, got 0"),
    ("DCOPS_MAX_SESSIONS", "two", "DCOPS_MAX_SESSIONS must be an integer, got 'two'"),
    ("DCOPS_SESSION_IDLE_S", "0", "DCOPS_SESSION_IDLE_S must be >= 0.001, got 0.0"),
    ("DCOPS_SESSION_IDLE_S", "nan", "DCOPS_SESSION_IDLE_S must be >= 0.001, got nan"),
    ("DCOPS_SESSION_IDLE_S", "soon", "DCOPS_SESSION_IDLE_S must be a number, got 'soon'"),
    ("DCOPS_MAX_BODY_BYTES", "1023", "DCOPS_MAX_BODY_BYTES must be >= 1024, got 1023"),
    ("DCOPS_WORKERS", "-1", "DCOPS_WORKERS must be >= 0, got -1"),
])
def test_bad_values_are_refused_by_name(env, name, value, message):
    env.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        ServerConfig.from_env()


def test_secrets_stay_out_of_the_repr(env):
    env.setenv("DCOPS_OPERATOR_TOKEN", "very-secret-token")
    config = ServerConfig.from_env()
    text = repr(config)
    assert "very-secret-token" not in text and repr(config.episode_secret) not in text


def test_the_dataclass_defaults_are_the_documented_ones_and_frozen(env):
    """The same defaults whether built directly or from an empty environment, as ``dcops serve --help`` states
    (64 sessions, 900 s idle, port 8000 on 0.0.0.0), with a 1 MiB body limit and no compression."""
    import argparse
    import dataclasses

    from dcops.server.config import add_serve_arguments

    direct, from_env = ServerConfig(), ServerConfig.from_env()
    for name in ("max_sessions", "session_idle_s", "max_body_bytes", "workers", "ws_compression", "db_sync",
                 "store_observations", "default_task", "operator_token", "ray_address"):
        assert getattr(direct, name) == getattr(from_env, name), name
    assert (direct.max_sessions, direct.session_idle_s, direct.max_body_bytes) == (64, 900.0, 1 << 20)
    assert direct.ws_compression is False
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    args = parser.parse_args([])
    assert (args.host, args.port) == ("0.0.0.0", 8000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        direct.max_sessions = 1  # type: ignore[misc]
