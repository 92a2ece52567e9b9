"""The path sandbox against escapes in many spellings, and a fuzz of its one promise:
whatever it accepts really is inside a root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hologram.security import PathRefused, PathSandbox
from hologram.security.policy import INTERNAL, PolicySettings, ToolPolicy


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "a.txt").write_text("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    os.symlink(outside, work / "link_out")
    os.symlink(outside / "secret.txt", work / "docs" / "file_link_out")
    os.symlink(work / "docs", work / "link_in")
    return work, outside


@pytest.fixture
def sandbox(roots: tuple[Path, Path]) -> PathSandbox:
    work, _ = roots
    return PathSandbox([work], [work / "docs"])


ESCAPES = [
    # (path, a word the reason must contain)
    ("../outside/secret.txt", "'..'"),
    ("docs/../../outside/secret.txt", "'..'"),
    ("docs/..", "'..'"),
    ("./../x", "'..'"),
    ("docs//..//..//x", "'..'"),
    ("..", "'..'"),
    ("/etc/passwd", "absolute"),
    ("//etc/passwd", "absolute"),
    ("/", "absolute"),
    ("link_out/secret.txt", "symbolic link"),
    ("link_out", "symbolic link"),
    ("docs/file_link_out", "symbolic link"),
    ("%2e%2e/outside/secret.txt", "percent"),
    ("%2E%2E%2Foutside", "percent"),
    ("..%2fsecret", "percent"),
    ("%252e%252e/x", "percent"),
    ("%c0%ae%c0%ae/x", "percent"),
    ("%u002e%u002e/x", "percent"),
    ("\uff0e\uff0e/outside", "dot or a slash"),  # fullwidth full stops
    ("..\uff0foutside", "dot or a slash"),  # fullwidth solidus
    ("\u2024\u2024/outside", "dot or a slash"),  # one-dot leaders
    ("\u2025/outside", "dot or a slash"),  # two-dot leader
    ("docs\u2215..\u2215x", "dot or a slash"),  # division slash
    ("docs\u2044x", "dot or a slash"),  # fraction slash
    ("\u3002\u3002/x", "dot or a slash"),  # ideographic full stop
    ("\ufe52\ufe52/x", "dot or a slash"),  # small full stop
    ("ｄｏｃｓ/a.txt", "compatibility"),  # fullwidth letters
    ("docs/\u200b../x", "format character"),  # zero-width space
    ("docs/\u202e../x", "format character"),  # right-to-left override
    ("docs/a.txt\x00.png", "NUL"),
    ("docs/\x1b[2J", "control character"),
    ("docs\\..\\..\\x", "backslash"),
    ("..\\x", "backslash"),
    ("~/secret", "'~'"),
    ("~root/.ssh", "'~'"),
    ("", "empty"),
]


@pytest.mark.parametrize(("path", "reason"), ESCAPES)
def test_escapes_are_refused_with_a_reason_that_names_the_trick(
    sandbox: PathSandbox, path: str, reason: str
) -> None:
    with pytest.raises(PathRefused) as refused:
        sandbox.check(path)
    assert reason in str(refused.value)


@pytest.mark.parametrize("value", [None, 3, ["docs"], {"p": 1}, b"docs"])
def test_a_path_that_is_not_a_string_is_refused(sandbox: PathSandbox, value: object) -> None:
    with pytest.raises(PathRefused, match="is a string"):
        sandbox.check(value)


def test_paths_inside_the_roots_are_accepted_and_resolved(
    sandbox: PathSandbox, roots: tuple[Path, Path]
) -> None:
    work, _ = roots
    real = Path(os.path.realpath(work))
    assert sandbox.check("docs/a.txt") == real / "docs" / "a.txt"
    assert sandbox.check("./docs/./a.txt") == real / "docs" / "a.txt"
    assert sandbox.check(str(work / "docs" / "a.txt")) == real / "docs" / "a.txt"
    assert sandbox.check("新建文件夹/笔记.txt") == real / "新建文件夹" / "笔记.txt"
    assert sandbox.check("link_in/a.txt") == real / "docs" / "a.txt"  # a link that stays in
    assert sandbox.check("docs.v2/x..y") == real / "docs.v2" / "x..y"  # dots, not '..'


def test_writing_is_held_to_the_write_roots(sandbox: PathSandbox, roots: tuple[Path, Path]) -> None:
    work, _ = roots
    assert sandbox.check("new.txt", write=True) == Path(os.path.realpath(work)) / "docs/new.txt"
    with pytest.raises(PathRefused, match="outside the write roots"):
        sandbox.check(str(work / "top.txt"), write=True)
    assert sandbox.check(str(work / "top.txt")).name == "top.txt"  # readable there


def test_no_roots_means_no_file_access(tmp_path: Path) -> None:
    with pytest.raises(PathRefused, match="no write roots"):
        PathSandbox([tmp_path], []).check("a.txt", write=True)


ALPHABET = st.sampled_from(
    [
        "a", "b", "docs", "link_out", "link_in", "file_link_out", "outside", "secret.txt",
        "/", "//", ".", "..", "...", "%2e", "%2f", "%", "~", "\\", "\x00", "\u200b",
        "\uff0e", "\uff0f", "\u2024", "\u2215", "ｄ", "é", "文", " ", "\n",
    ]
)  # fmt: skip


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(ALPHABET, min_size=1, max_size=8), absolute=st.booleans(), write=st.booleans()
)
def test_fuzz_whatever_is_accepted_resolves_inside_a_root(
    sandbox: PathSandbox, roots: tuple[Path, Path], parts: list[str], absolute: bool, write: bool
) -> None:
    work, outside = roots
    raw = "".join(parts)
    if absolute:
        raw = str(work) + "/" + raw
    try:
        accepted = sandbox.check(raw, write=write)
    except PathRefused as exc:
        assert str(exc)  # every refusal says why
        return
    real = Path(os.path.realpath(accepted))
    allowed = [Path(os.path.realpath(r)) for r in sandbox.roots(write)]
    assert any(real == r or r in real.parents for r in allowed), (raw, real)
    assert Path(os.path.realpath(outside)) not in [real, *real.parents]
    assert ".." not in Path(raw).parts and "\x00" not in raw


EXPANSIONS = [
    # (path, the part the reason names)
    ("$HOME/.ssh/id_rsa", "'$HOME'"),
    ("${HOME}", "'${HOME}'"),
    ("docs/${XDG_DATA_HOME}/a.txt", "'${XDG_DATA_HOME}'"),
    ("/tmp/$USER/notes", "'$USER'"),
    ("docs/$(whoami).txt", "'$(whoami)'"),
    ("docs/`id`.txt", "'`id`'"),
    ("a$b.txt", "'$b'"),  # a shell expands `$b` in the middle of a word too
    ("%APPDATA%/notes.txt", "'%APPDATA%'"),
    ("docs/%USERPROFILE%", "'%USERPROFILE%'"),
    ("%ProgramFiles(x86)%/app", "'%ProgramFiles(x86)%'"),
]


@pytest.mark.parametrize(("path", "named"), EXPANSIONS)
def test_a_path_a_shell_would_expand_is_refused_naming_the_expansion(
    sandbox: PathSandbox, path: str, named: str
) -> None:
    with pytest.raises(PathRefused) as refused:
        sandbox.check(path)
    reason = str(refused.value)
    assert named in reason and "a shell would expand" in reason
    assert "send the path as it is on disk" in reason


@pytest.mark.parametrize("path", ["~", "~/notes.txt", "~root/.ssh/id_rsa", "~alice"])
def test_a_leading_tilde_is_refused_as_a_home_directory_the_sandbox_will_not_guess(
    sandbox: PathSandbox, path: str
) -> None:
    with pytest.raises(PathRefused) as refused:
        sandbox.check(path)
    assert "home directory" in str(refused.value)
    assert "send the path as it is on disk" in str(refused.value)


@pytest.mark.parametrize(
    ("path", "scheme"),
    [
        ("file:///etc/passwd", "file:"),
        ("file:docs/a.txt", "file:"),
        ("FILE://localhost/etc/passwd", "file:"),
        ("https://example.com/a.txt", "https:"),
    ],
)
def test_a_url_in_place_of_a_path_is_refused(sandbox: PathSandbox, path: str, scheme: str) -> None:
    with pytest.raises(PathRefused) as refused:
        sandbox.check(path)
    assert f"is a {scheme} URL, not a path" in str(refused.value)


def test_an_expansion_is_refused_even_when_a_folder_of_that_literal_name_exists(
    sandbox: PathSandbox, roots: tuple[Path, Path]
) -> None:
    work, _ = roots
    (work / "$HOME").mkdir()  # the literal reading exists; the other is still possible
    with pytest.raises(PathRefused, match="a shell would expand"):
        sandbox.check("$HOME")


LITERAL_NAMES = [
    "a~b.txt",
    "notes.txt~",
    "docs/~draft.md",
    "price$5.txt",
    "cost$.txt",
    "docs/$$.log",
    "100%.txt",
    "notes:2024.txt",
]


@pytest.mark.parametrize("name", LITERAL_NAMES)
def test_dollar_tilde_and_percent_inside_a_name_are_taken_literally(
    sandbox: PathSandbox, roots: tuple[Path, Path], name: str
) -> None:
    work, _ = roots
    target = work / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")
    accepted = sandbox.check(name)
    assert accepted == Path(os.path.realpath(target)) and accepted.read_text() == "x"


def test_one_calls_paths_look_at_a_shared_folder_once_and_still_see_its_links(
    roots: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lstat results shared between the paths of one tool call save the repeated look
    at a folder; a link among them is still followed, and a new call looks again."""
    work, _ = roots
    policy = ToolPolicy(
        PolicySettings(path_args=frozenset({"paths"}), read_roots=(work,), write_roots=())
    )
    looked: list[str] = []
    real_lstat = os.lstat

    def counting(path: str) -> os.stat_result:
        looked.append(str(path))
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", counting)
    names = ["docs/a.txt", "docs/b.txt", "docs/c.txt"]
    assert policy.decide("read_many", {"paths": names}, INTERNAL) is None
    assert looked.count(str(work / "docs")) == 1
    refused = policy.decide("read_many", {"paths": ["docs/a.txt", "link_out/secret.txt"]}, INTERNAL)
    assert refused is not None and "resolves outside" in refused
    # A folder that became a link between two calls is seen by the second.
    looked.clear()
    os.rename(work / "docs", work / "docs_moved")
    os.symlink(roots[1], work / "docs")
    refused = policy.decide("read_many", {"paths": names}, INTERNAL)
    assert refused is not None and "resolves outside" in refused
    assert str(work / "docs") in looked
