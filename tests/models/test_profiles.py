"""Model profiles from config.toml, the environment and the private .env file."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.scripted_server import Scripted, ScriptedServer
from teamlore.core.errors import TeamloreError
from teamlore.models.openai_compat import OpenAICompatClient
from teamlore.models.profiles import load_profile, profile_names, read_env_file

KEY = "sk-profile-SECRET-42"


def write(home: Path, name: str, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / name).write_text(text, encoding="utf-8")


def test_named_profile_from_config_with_key_from_dotenv(home: Path) -> None:
    write(
        home,
        "config.toml",
        '[models.writer]\nbase_url = "http://127.0.0.1:8080/v1/"\nmodel = "deepseek-chat"\n'
        'api_key_env = "DEEPSEEK_KEY"\napi = "responses"\ntimeout_s = 12.5\nmax_retries = 4\n',
    )
    write(home, ".env", f"# private\nexport DEEPSEEK_KEY='{KEY}'\nOTHER=1\n")
    profile = load_profile("writer", home=home, environ={})
    assert profile.base_url == "http://127.0.0.1:8080/v1"
    assert (profile.model, profile.api, profile.timeout_s, profile.max_retries) == (
        "deepseek-chat",
        "responses",
        12.5,
        4,
    )
    assert profile.api_key.get_secret_value() == KEY
    assert KEY not in repr(profile) and KEY not in str(profile.model_dump())
    assert profile_names(home) == ["writer"]


def test_default_profile_comes_from_the_environment_alone(home: Path) -> None:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "https://llm.example/v1", "OPENAI_MODEL": "m"}
    profile = load_profile(home=home, environ=env)
    assert (profile.name, profile.base_url, profile.model, profile.api) == (
        "default",
        "https://llm.example/v1",
        "m",
        "chat",
    )


def test_process_environment_wins_over_dotenv(home: Path) -> None:
    write(home, "config.toml", '[models.default]\nmodel = "m"\n')
    write(home, ".env", 'OPENAI_API_KEY="from-file"\n')
    assert load_profile(home=home, environ={}).api_key.get_secret_value() == "from-file"
    env = {"OPENAI_API_KEY": "from-env"}
    assert load_profile(home=home, environ=env).api_key.get_secret_value() == "from-env"


def test_missing_key_names_the_variable_not_a_value(home: Path) -> None:
    write(home, "config.toml", '[models.default]\nmodel = "m"\napi_key_env = "MY_KEY"\n')
    with pytest.raises(TeamloreError) as caught:
        load_profile(home=home, environ={"OPENAI_API_KEY": KEY})
    assert caught.value.code == "MODEL_NOT_CONFIGURED"
    assert "$MY_KEY" in caught.value.message and KEY not in caught.value.message


def test_missing_key_names_the_env_file_from_the_tilde(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home.parent))
    write(home, "config.toml", '[models.default]\nmodel = "m"\n')
    with pytest.raises(TeamloreError) as caught:
        load_profile(home=home, environ={})
    assert f"(environment or ~/{home.name}/.env)" in caught.value.message


@pytest.mark.parametrize(
    ("base_url", "on_this_machine"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8080/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.0.0.2/v1", True),
        ("http://LOCALHOST./v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8080/v1", False),
        ("http://localhost.example.com/v1", False),
        ("http://127.0.0.1.example.com/v1", False),
    ],
)
def test_only_a_server_on_this_machine_goes_without_a_key(
    home: Path, base_url: str, on_this_machine: bool
) -> None:
    write(home, "config.toml", f'[models.default]\nmodel = "m"\nbase_url = "{base_url}"\n')
    if on_this_machine:
        profile = load_profile(home=home, environ={})
        assert profile.api_key is None and profile.base_url == base_url.rstrip("/")
        return
    with pytest.raises(TeamloreError) as caught:
        load_profile(home=home, environ={})
    assert caught.value.code == "MODEL_NOT_CONFIGURED"
    assert "$OPENAI_API_KEY" in caught.value.message


@pytest.mark.parametrize(
    ("toml", "code"),
    [
        ('[models.default]\napi_key_env = "OPENAI_API_KEY"\n', "MODEL_NOT_CONFIGURED"),
        ('[models.default]\nmodel = "m"\nbase_url = "ftp://x/v1"\n', "CONFIG_INVALID"),
        ('[models.default]\nmodel = "m"\nbase_url = "https://u:p@x/v1"\n', "CONFIG_INVALID"),
        (
            '[models.default]\nmodel = "m"\nbase_url = "https://x/v1/chat/completions"\n',
            "CONFIG_INVALID",
        ),
        ('[models.default]\nmodel = "m"\napi = "completions"\n', "CONFIG_INVALID"),
        ('[models.default]\nmodel = "m"\nmax_retries = 99\n', "CONFIG_INVALID"),
        ('[models.default]\nmodel = "m"\nsurprise = 1\n', "CONFIG_INVALID"),
        ("models = 3\n", "CONFIG_INVALID"),
    ],
)
def test_bad_profiles_are_refused(home: Path, toml: str, code: str) -> None:
    write(home, "config.toml", toml)
    with pytest.raises(TeamloreError) as caught:
        load_profile(home=home, environ={"OPENAI_API_KEY": KEY})
    assert caught.value.code == code


def test_an_undefined_named_profile_is_not_configured(home: Path) -> None:
    write(home, "config.toml", '[models.default]\nmodel = "m"\n')
    with pytest.raises(TeamloreError) as caught:
        load_profile("runner", home=home, environ={"OPENAI_API_KEY": KEY})
    assert caught.value.code == "MODEL_NOT_CONFIGURED"
    assert "default" in caught.value.message


def test_env_file_parsing(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text(
        "A=1\nexport B=\"two words\"\nC='x#y'\nD=plain # comment\n bad line\n#E=hidden\n=x\n"
    )
    assert read_env_file(path) == {"A": "1", "B": "two words", "C": "x#y", "D": "plain"}
    assert read_env_file(tmp_path / "missing") == {}


def test_a_profile_drives_a_real_client(home: Path) -> None:
    with ScriptedServer([Scripted.responses("pong")]) as server:
        write(
            home,
            "config.toml",
            f'[models.default]\nbase_url = "{server.base_url}"\nmodel = "m1"\napi = "responses"\n',
        )
        profile = load_profile(home=home, environ={"OPENAI_API_KEY": KEY})
        with OpenAICompatClient.from_profile(profile) as client:
            from teamlore.models.base import ModelRequest

            assert client.complete(ModelRequest.chat("s", "ping")).text == "pong"
        [sent] = server.requests
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.json()["model"] == "m1"
