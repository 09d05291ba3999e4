"""WORKFLOW.md location and front matter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import (
    ConfigError,
    Workflow,
    load_settings,
    load_workflow,
    parse_workflow_content,
    workflow_path,
)


def test_workflow_path_defaults_to_cwd(tmp_path: Path) -> None:
    """Without LORENZ_WORKFLOW the workflow is <cwd>/WORKFLOW.md."""
    assert workflow_path(tmp_path, {}) == tmp_path / "WORKFLOW.md"


def test_workflow_path_relative_env_joins_cwd(tmp_path: Path) -> None:
    """A relative LORENZ_WORKFLOW is joined to the cwd."""
    assert workflow_path(tmp_path, {"LORENZ_WORKFLOW": "conf/flow.md"}) == tmp_path / "conf" / "flow.md"


def test_workflow_path_absolute_env_is_kept(tmp_path: Path) -> None:
    """An absolute LORENZ_WORKFLOW is used as is."""
    target = tmp_path / "elsewhere" / "W.md"
    assert workflow_path(Path("/nowhere"), {"LORENZ_WORKFLOW": str(target)}) == target


def test_empty_lorenz_workflow_is_unset(tmp_path: Path) -> None:
    """An empty LORENZ_WORKFLOW counts as unset."""
    assert workflow_path(tmp_path, {"LORENZ_WORKFLOW": ""}) == tmp_path / "WORKFLOW.md"


def test_front_matter_and_body_split() -> None:
    """The fenced YAML becomes the config and the rest, verbatim, the body."""
    parsed = parse_workflow_content("---\nensemble_size: 2\n---\nHello {{ issue.identifier }}")
    assert parsed == Workflow({"ensemble_size": 2}, "Hello {{ issue.identifier }}")


def test_key_value_front_matter() -> None:
    """Strings and integers come through as plain Python values."""
    parsed = parse_workflow_content("---\nkey: value\nnum: 42\n---\nBody text here")
    assert parsed.config == {"key": "value", "num": 42}
    assert parsed.body == "Body text here"


def test_no_front_matter_is_an_error() -> None:
    """Without an opening fence there are no settings: issue 13 makes that its own error (not item 91's body)."""
    with pytest.raises(ConfigError) as info:
        parse_workflow_content("  just text\n---\nmore\n")
    assert str(info.value) == (
        "WORKFLOW.md:1:1: no front matter: "
        'a workflow starts with a "---" line, then its settings, then another "---" line'
    )


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_empty_content_is_an_error(text: str) -> None:
    """An empty (or blank) file says so."""
    with pytest.raises(ConfigError) as info:
        parse_workflow_content(text)
    assert str(info.value) == (
        'WORKFLOW.md: the file is empty; a workflow starts with front matter between two "---" lines'
    )


def test_fence_with_trailing_space_is_not_a_fence() -> None:
    """`--- ` (trailing space) does not open front matter, and the message says why."""
    with pytest.raises(ConfigError) as info:
        parse_workflow_content("--- \na: 1\n---\nx")
    assert str(info.value) == 'WORKFLOW.md:1:1: no front matter: the first line must be exactly "---", without spaces'


def test_unclosed_front_matter_is_an_error() -> None:
    """An opening fence without a closing one points at the opening fence."""
    with pytest.raises(ConfigError) as info:
        parse_workflow_content("---\na: 1\n", name="flows/W.md")
    assert str(info.value) == (
        'flows/W.md:1:1: the front matter opened here is not closed: add a "---" line after the settings'
    )


def test_crlf_and_later_fences_stay_in_body() -> None:
    """CRLF becomes LF and a later `---` stays in the body."""
    parsed = parse_workflow_content("---\r\na: 1\r\n---\r\nfirst\r\n---\r\nsecond\r\n")
    assert parsed == Workflow({"a": 1}, "first\n---\nsecond")


def test_blank_front_matter_is_empty_config() -> None:
    """Whitespace-only front matter is an empty map."""
    assert parse_workflow_content("---\n  \n---\nbody") == Workflow({}, "body")


def test_yaml_12_core_schema_scalars() -> None:
    """yes/on/dates/1_000 stay strings, 0o17 is 15, 0x1F is 31, ~ is None."""
    text = "---\na: yes\nb: on\nc: 2024-01-01\nd: 0o17\ne: 1_000\nf: 0x1F\ng: ~\nh: 1.5\ni: off\n---\n"
    config = parse_workflow_content(text).config
    assert config == {
        "a": "yes",
        "b": "on",
        "c": "2024-01-01",
        "d": 15,
        "e": "1_000",
        "f": 31,
        "g": None,
        "h": 1.5,
        "i": "off",
    }


def test_front_matter_is_plain_data() -> None:
    """Nested maps and lists are plain dicts and lists, timestamps become ISO strings."""
    text = "---\nm: {x: [1, {y: true}]}\nt: !!timestamp 2024-01-01\n---\n"
    config = parse_workflow_content(text).config
    assert type(config) is dict
    assert type(config["m"]) is dict
    assert type(config["m"]["x"]) is list
    assert config == {"m": {"x": [1, {"y": True}]}, "t": "2024-01-01"}


def test_duplicate_keys_are_a_parse_error() -> None:
    """A key given twice is an error at the second one, in the file's own line numbers."""
    with pytest.raises(ConfigError) as raised:
        parse_workflow_content("---\na: 1\na: 2\n---\n")
    assert str(raised.value) == 'WORKFLOW.md:3:1: found duplicate key "a"'


def test_duplicate_key_error_does_not_echo_values() -> None:
    """A duplicate key names the key and where it is, never either value (they may be secrets)."""
    with pytest.raises(ConfigError) as raised:
        parse_workflow_content("---\nserver:\n  token: first-s3cret\n  token: second-s3cret\n---\n")
    assert str(raised.value) == 'WORKFLOW.md:4:3: found duplicate key "token"'


def test_yaml_error_lines_count_from_the_file() -> None:
    """Line numbers are the file's (the opening fence is line 1), with CRLF counted as one break."""
    with pytest.raises(ConfigError) as raised:
        parse_workflow_content("---\r\ntracker:\r\n  kind: local\r\n  path: a: b\r\n---\r\n")
    assert str(raised.value) == "WORKFLOW.md:4:10: mapping values are not allowed here"


@pytest.mark.parametrize(
    "value",
    [
        "!!int s3cret-value",
        "!!float s3cret-value",
        "!!bool s3cret-value",
        "!!timestamp s3cret-value",
        "!!binary s3cret-valu\u00e9",
        '"s3cret-value\\q"',
        '"s3cret-value\\xZZ"',
        "!!omap [{s3cret-value: 1}, {s3cret-value: 2}]",
    ],
)
def test_parse_errors_do_not_echo_values(value: str) -> None:
    """Parse errors about a value (a bad explicit tag, escape or timestamp) never quote it."""
    with pytest.raises(ConfigError, match=r"^WORKFLOW\.md(:2:\d+)?: [^\n]+$") as raised:
        parse_workflow_content(f"---\napi_key: {value}\n---\n")
    assert "s3cret" not in str(raised.value)
    assert not any(fragment in str(raised.value) for fragment in ("'Z'", "'q'", "\\xe9", "\u00e9"))


def test_malformed_yaml_is_a_parse_error() -> None:
    """Broken YAML reports where, then the parser's message on one line, with no internal prefix."""
    with pytest.raises(ConfigError) as raised:
        parse_workflow_content("---\nfoo: [unclosed\n---\nbody")
    assert str(raised.value) == (
        "WORKFLOW.md:2:6: expected ',' or ']', but got '<stream end>' while parsing a flow sequence that opens here"
    )


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        (
            "tracker: {kind: local}\ntools: {ticker: {}\nserver:\n  port: 4\n",
            "WORKFLOW.md:4:1: expected ',' or '}', but got '<scalar>' in the flow mapping that opens at line 3, "
            "column 8",
        ),
        (
            "labels: [a, b\nnext: 1\n",
            "WORKFLOW.md:3:5: expected ',' or ']', but got ':' in the flow sequence that opens at line 2, column 9",
        ),
    ],
)
def test_an_unclosed_flow_collection_names_where_it_opens(front_matter: str, message: str) -> None:
    """A `{` or `[` left open runs into the next line, where the parser fails: the message says
    where the collection opened, in the file's lines too."""
    with pytest.raises(ConfigError) as raised:
        parse_workflow_content(f"---\n{front_matter}---\nbody")
    assert str(raised.value) == message


@pytest.mark.parametrize("front_matter", ["- a\n- b", "just a scalar", "~", "# only a comment"])
def test_non_map_front_matter(front_matter: str) -> None:
    """Lists, scalars, null and comment-only front matter are not a map."""
    with pytest.raises(ConfigError, match="^WORKFLOW.md:2:1: front matter must be a map$"):
        parse_workflow_content(f"---\n{front_matter}\n---\nbody")


def test_missing_workflow_file(tmp_path: Path) -> None:
    """A missing file names its absolute path and ENOENT."""
    missing = tmp_path / "nope.md"
    with pytest.raises(ConfigError, match=f"^missing_workflow_file: {missing} ENOENT$"):
        load_workflow(missing)


def test_load_workflow_records_path(tmp_path: Path) -> None:
    """load_workflow keeps the absolute path of the file."""
    path = tmp_path / "WORKFLOW.md"
    path.write_text("---\ntracker: {kind: x}\n---\nDo it.\n", encoding="utf-8")
    assert load_workflow(path) == Workflow({"tracker": {"kind": "x"}}, "Do it.", path)


def test_load_settings_sets_path_body_and_base_dir(tmp_path: Path) -> None:
    """load_settings stamps the workflow path and body and resolves against its directory."""
    path = tmp_path / "WORKFLOW.md"
    path.write_text("---\ntracker: {kind: anything}\n---\nPrompt body\n", encoding="utf-8")
    settings = load_settings(path, env={}, trackers=TrackerRegistry())
    assert settings.workflow_path == path
    assert settings.body == "Prompt body"
    assert settings.base_dir == tmp_path
    assert settings.tracker.kind == "anything"


def test_non_string_keys_become_strings() -> None:
    """Map keys are strings, the way JavaScript object keys are."""
    assert parse_workflow_content("---\n2: two\ntrue: yes\n---\n").config == {"2": "two", "true": "yes"}


def test_aliases_are_expanded_once() -> None:
    """An alias "bomb" stays small: anchored nodes are converted once and shared."""
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for index in range(1, 9):
        previous, name = chr(96 + index), chr(97 + index)
        levels.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    config = parse_workflow_content("---\n" + "\n".join(levels) + "\n---\n").config
    assert config["i"][0][0][0][0][0][0][0][0] == ["x"] * 9


def test_redefined_anchor_is_silent(recwarn: pytest.WarningsRecorder) -> None:
    """An anchor defined twice is valid YAML 1.2 (an alias takes the latest) and warns nothing:
    ruamel's warning would print the document's lines, secrets included, to stderr."""
    text = "---\napi_key: &k s3cret-one\ntoken: &k s3cret-two\nother: *k\n---\n"
    expected = {"api_key": "s3cret-one", "token": "s3cret-two", "other": "s3cret-two"}
    assert parse_workflow_content(text).config == expected
    assert [str(warning.message) for warning in recwarn] == []


def test_recursive_alias_is_a_parse_error() -> None:
    """A node that contains itself is refused."""
    with pytest.raises(ConfigError, match=r"^WORKFLOW\.md: recursive aliases are not supported$"):
        parse_workflow_content("---\na: &a [*a]\n---\n")


def test_absurd_nesting_is_a_parse_error() -> None:
    """Nesting deeper than the interpreter can follow is a parse error, not a crash."""
    with pytest.raises(ConfigError, match=r"^WORKFLOW\.md: front matter nests too deeply$"):
        parse_workflow_content("---\nx: " + "[" * 1100 + "]" * 1100 + "\n---\n")


def test_unknown_tag_is_a_parse_error() -> None:
    """Custom tags cannot be constructed into plain data."""
    with pytest.raises(ConfigError, match=r"^WORKFLOW\.md:2:4: could not determine a constructor for the tag"):
        parse_workflow_content("---\na: !python/object:os.system echo\n---\n")


def test_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark does not hide the front matter."""
    path = tmp_path / "WORKFLOW.md"
    path.write_bytes(b"\xef\xbb\xbf---\nkey: value\n---\nBody\n")
    assert load_workflow(path) == Workflow({"key": "value"}, "Body", path)


def test_invalid_utf8_is_a_parse_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes that are not UTF-8 are an error at their line and column, not a crash."""
    path = tmp_path / "WORKFLOW.md"
    path.write_bytes(b"---\nkey: \xff\n---\n")
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}:2:6: not valid UTF-8$"):
        load_workflow(path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^WORKFLOW\.md:2:6: not valid UTF-8$"):
        load_workflow(path)


def test_directory_is_not_a_workflow(tmp_path: Path) -> None:
    """A directory in place of the file reports its errno code."""
    with pytest.raises(ConfigError, match=f"^missing_workflow_file: {tmp_path} EISDIR$"):
        load_workflow(tmp_path)
