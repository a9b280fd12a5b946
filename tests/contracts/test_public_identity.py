"""public_repository_identity: only a sanitized network identity ever leaves the machine."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from teamlore.contracts.repository import PUBLIC_IDENTITY_PATTERN
from teamlore.repo.public_identity import public_repository_identity


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("https://github.com/acme/widgets.git", "github.com/acme/widgets"),
        ("https://github.com/acme/widgets/", "github.com/acme/widgets"),
        ("https://github.com/acme/widgets.git/", "github.com/acme/widgets"),
        ("HTTPS://GitHub.COM/Acme/Widgets", "github.com/Acme/Widgets"),
        ("https://user:s3cret@github.com/acme/widgets.git", "github.com/acme/widgets"),
        ("https://token@github.com/acme/widgets?private_token=abc#frag", "github.com/acme/widgets"),
        ("http://git.example.org:8080/team/sub/repo.git", "git.example.org:8080/team/sub/repo"),
        ("ssh://git@host.example:2222/org/repo.git", "host.example:2222/org/repo"),
        ("git://host.example/org/repo", "host.example/org/repo"),
        ("git@github.com:acme/widgets.git", "github.com/acme/widgets"),
        ("deploy@GitLab.Example.com:group/sub/repo.git/", "gitlab.example.com/group/sub/repo"),
        ("  git@github.com:acme/widgets.git\n", "github.com/acme/widgets"),
    ],
)
def test_network_remotes_become_host_and_path(url: str, identity: str) -> None:
    assert public_repository_identity(url) == identity


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "/home/me/widgets",
        "/home/me/widgets.git",
        "./widgets",
        "../widgets",
        "~/widgets",
        "file:///home/me/widgets",
        "file:/home/me/widgets",
        "C:\\Users\\me\\widgets",
        "C:/Users/me/widgets",
        "c:widgets",
        "ftp://host.example/org/repo",
        "git+ssh://host.example/org/repo",
        "https://host.example/",
        "https://host.example/org/../repo",
        "https://host.example/org/re@po",
        "https:///org/repo",
        "https://exa mple.com/org/repo",
        "widgets",
    ],
)
def test_local_unsafe_and_other_urls_have_no_identity(url: str | None) -> None:
    assert public_repository_identity(url) is None


SECRET = st.from_regex(r"[A-Za-z0-9]{6,12}", fullmatch=True).map(lambda s: "SECRET" + s)
HOST = st.from_regex(r"[a-z](?:[a-z0-9-]{0,9}[a-z0-9])?(\.[a-z]{2,5}){0,2}", fullmatch=True)
SEGMENT = st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True)


@given(
    scheme=st.sampled_from(["http", "https", "ssh", "git"]),
    user=SECRET,
    password=SECRET,
    host=HOST,
    segments=st.lists(SEGMENT, min_size=1, max_size=4),
    query=SECRET,
)
def test_credentials_and_query_never_survive(
    scheme: str, user: str, password: str, host: str, segments: list[str], query: str
) -> None:
    assume(all(any(c.isalnum() for c in segment) for segment in segments))  # `.`/`..` name nothing
    url = f"{scheme}://{user}:{password}@{host}/{'/'.join(segments)}?token={query}#{query}"
    identity = public_repository_identity(url)
    assert identity is not None  # a remote URL naming a repository has a public identity
    assert "SECRET" not in identity
    assert identity.startswith(host + "/")
    assert re.match(PUBLIC_IDENTITY_PATTERN, identity)


@given(st.text(max_size=80))
def test_output_is_never_a_credential_or_local_path(url: str) -> None:
    identity = public_repository_identity(url)
    if identity is None:
        return
    assert "@" not in identity
    assert not identity.startswith(("/", "~", ".", "\\"))
    assert "\\" not in identity and "?" not in identity and "#" not in identity
    assert not re.match(r"^[A-Za-z]:", identity.split("/")[0] + "/")
    assert re.match(PUBLIC_IDENTITY_PATTERN, identity)
    assert public_repository_identity("https://" + identity) == identity


@given(st.sampled_from(["/", "./", "../", "~/", "file://", "file:", "C:\\", "D:/"]), st.text())
def test_local_paths_of_any_shape_give_none(prefix: str, rest: str) -> None:
    assert public_repository_identity(prefix + rest) is None
