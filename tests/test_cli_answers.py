"""``lorenz call`` answering a tool that asks its client for input (issue 44), through the installed
script: ``--answer``, ``--yes``, ``--decline``, a prompt per form field on a terminal (a pseudo-terminal
here), roots, sampling, and the tool's own progress on the progress line."""

from __future__ import annotations

import codecs
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lorenz.cli.form_fields import confirmation, example, fields_of, parse_typed, problems
from lorenz.testing import ServedWorkflow

PACK = Path(__file__).with_name("asking_pack.py")
SCRIPT = Path(sys.executable).with_name("lorenz")


def _env(**extra: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    return {**environ, "LORENZ_LOAD_PLUGINS": "lorenz-local", "NO_COLOR": "1", **extra}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\ntools:\n  asking: {}\n---\n", encoding="utf-8")
    return tmp_path


def call(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``lorenz call`` with stdin, stdout and stderr on pipes (a script)."""
    command = [str(SCRIPT), "-p", str(PACK), "call", *args]
    return subprocess.run(
        command, cwd=work, env=_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


def result(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_script_answers_a_confirmation_with_answer_yes_or_decline(work: Path) -> None:
    """--answer gives the form's content, --yes accepts a confirmation with true, --decline declines;
    without any, stdin not being a terminal fails the call naming the flags to pass."""
    answered = call(work, "asking_confirm", "--answer", 'confirm={"confirm": false}')
    assert answered.returncode == 0, answered.stderr
    assert result(answered)["result"] == {"action": "accept", "content": {"confirm": False}}
    yes = call(work, "asking_confirm", "-y")
    assert result(yes)["result"] == {"action": "accept", "content": {"confirm": True}}
    declined = call(work, "asking_confirm", "--decline")
    assert result(declined)["result"] == {"action": "decline", "content": None}
    unanswered = call(work, "asking_confirm")
    assert unanswered.returncode == 1
    failure = result(unanswered)
    assert failure["result"]["error"]["reason"] == "client_input_failed"
    hint = "stdin is not a terminal, so pass --answer confirm='{\"confirm\": true}', --yes or --decline"
    assert hint in failure["error"]
    assert f"lorenz: asking_confirm asks 'confirm' (Go ahead?): {hint}" in unanswered.stderr.splitlines()


@pytest.mark.slow
def test_an_answer_that_does_not_fit_its_form_is_refused_naming_each_field(work: Path) -> None:
    """A misspelt field gets a suggestion, a value out of range or of the wrong type is named; a
    misspelt question name is suggested too, and an --answer nobody asked for is noted."""
    content = {"title": "x", "count": 11, "colour": "pink", "urgnt": True}
    wrong = call(work, "asking_details", "--answer", f"details={json.dumps(content)}")
    assert wrong.returncode == 1
    assert result(wrong)["error"].endswith(
        "--answer details: the form has no field 'urgnt' (did you mean \"urgent\"?); count must be at most 10, "
        'not 11; colour must be one of red, green, blue, not "pink"'
    )
    typo = call(work, "asking_confirm", "--answer", 'confrim={"confirm": true}')
    assert typo.returncode == 1
    assert "(--answer confrim: did you mean confirm?)" in result(typo)["error"]
    assert "lorenz: --answer confrim: asking_confirm asked no question of that name" in typo.stderr.splitlines()
    malformed = call(work, "asking_confirm", "--answer", "confirm={confirm: true}")
    assert malformed.returncode == 1 and malformed.stdout == ""
    assert "--answer confirm: not JSON (Expecting property name enclosed in double quotes" in malformed.stderr


@pytest.mark.slow
def test_yes_accepts_confirmations_only(work: Path) -> None:
    """A form that asks for more than a yes (a required title) is not accepted by --yes: the call says
    what to pass, or --decline declines it."""
    details = call(work, "asking_details", "--yes")
    assert details.returncode == 1
    assert 'so pass --answer details=\'{"title": "..."}\' or --decline' in result(details)["error"]
    declined = call(work, "asking_details", "--yes", "--decline")
    assert result(declined)["result"]["action"] == "decline"


@pytest.mark.slow
def test_roots_are_the_current_directory_and_sampling_is_declined(work: Path) -> None:
    """Roots answer with the current directory; a request for a model's reply fails the call saying
    lorenz call has no model (as a client without one answers it over MCP)."""
    roots = call(work, "asking_roots")
    assert roots.returncode == 0, roots.stderr
    assert result(roots)["result"] == {"roots": [work.resolve().as_uri()]}
    draft = call(work, "asking_draft")
    assert draft.returncode == 1
    why = "'draft' asks the client's model to write a reply (sampling/createMessage), and lorenz call has no model"
    assert result(draft)["error"] == f"asking_draft asked the client for input and got no answer: {why}"
    assert result(draft)["result"]["error"]["reason"] == "client_input_failed"
    assert f"lorenz: asking_draft: {why}" in draft.stderr.splitlines()


@pytest.mark.slow
def test_call_server_answers_as_the_in_process_call(work: Path) -> None:
    """Over --server, the same flags answer the same questions and a question left unanswered prints
    the same failure object, exit status and hint as in-process."""
    server = ServedWorkflow(work, _env(), [str(SCRIPT), "-p", str(PACK), "serve", "--port", "0"])
    try:
        for args in (["asking_confirm", "--answer", 'confirm={"confirm": true}'], ["asking_roots"], ["asking_confirm"]):
            local = call(work, *args)
            remote = call(work, "--server", server.url, *args)
            assert (remote.returncode, remote.stdout) == (local.returncode, local.stdout), remote.stderr
            assert remote.stderr == local.stderr
        assert result(local)["result"]["error"]["reason"] == "client_input_failed"
        declined = call(work, "--server", server.url, "asking_details", "--yes", "--decline")
        assert result(declined)["result"] == {"action": "decline", "content": None}
    finally:
        server.stop()


@pytest.mark.slow
def test_a_url_is_accepted_only_when_answered(work: Path) -> None:
    unanswered = call(work, "asking_sign_in")
    assert "so open https://acme.test/login, then pass --answer sign_in=accept; or --decline" in unanswered.stderr
    accepted = call(work, "asking_sign_in", "--answer", "sign_in=accept")
    assert result(accepted)["result"] == {"action": "accept", "content": None}


class Terminal:
    """``lorenz call`` with stdin and stderr on a pseudo-terminal (stdout on a pipe): what it wrote to
    the terminal so far, and lines typed into it."""

    def __init__(self, work: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.controller, terminal = pty.openpty()
        command = [str(SCRIPT), "-p", str(PACK), "call", *args]
        self.process = subprocess.Popen(
            command, cwd=work, env=env or _env(), stdin=terminal, stderr=terminal, stdout=subprocess.PIPE, text=True
        )
        os.close(terminal)
        self.screen = ""
        self.seen = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a character may span two reads

    def expect(self, text: str, timeout: float = 30.0) -> None:
        """Read the terminal until ``text`` shows up after the last text expected."""
        deadline = time.monotonic() + timeout
        while text not in self.screen[self.seen :]:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r}; the terminal showed:\n{self.screen}"
            ready, _, _ = select.select([self.controller], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.controller, 4096)
                except OSError:  # EIO: the process is gone
                    chunk = b""
                assert chunk, f"the terminal closed before {text!r}:\n{self.screen}"
                self.screen += self.decoder.decode(chunk)
        self.seen = self.screen.index(text, self.seen) + len(text)

    def type(self, line: str) -> None:
        os.write(self.controller, line.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        stdout, _ = self.process.communicate(timeout=60)
        os.close(self.controller)
        return self.process.returncode, stdout


@pytest.mark.slow
def test_a_terminal_is_asked_each_field_typed_by_the_form(work: Path) -> None:
    """Each field in turn, with its description and default: a required field is asked again when left
    empty, a value out of range is refused with why, a choice is taken by its number, Enter keeps a
    default and skips an optional field; stdout holds only the result."""
    terminal = Terminal(work, "asking_details")
    terminal.expect("asking_details asks: Describe the ticket.")
    terminal.expect("title (string): ")
    terminal.type("")
    terminal.expect("title is required")
    terminal.expect("title (string): ")
    terminal.type("Fix the lift")
    terminal.expect("How many copies.")
    terminal.expect("count (integer) [3]: ")
    terminal.type("12")
    terminal.expect("count must be at most 10, not 12")
    terminal.type("4")
    terminal.expect("3) blue")
    terminal.expect("colour (number or value) [green]: ")
    terminal.type("3")
    terminal.expect("urgent (y/n) [false]: ")
    terminal.type("y")
    terminal.expect("note (string) (optional): ")
    terminal.type("")
    code, stdout = terminal.finish()
    assert code == 0, terminal.screen
    content = {"title": "Fix the lift", "count": 4, "colour": "blue", "urgent": True}
    assert json.loads(stdout)["result"] == {"action": "accept", "content": content}


@pytest.mark.slow
def test_end_of_input_at_a_prompt_declines(work: Path) -> None:
    terminal = Terminal(work, "asking_confirm")
    terminal.expect("confirm (y/n): ")
    os.write(terminal.controller, b"\x04")  # Ctrl-D
    code, stdout = terminal.finish()
    assert code == 0, terminal.screen
    assert json.loads(stdout)["result"] == {"action": "decline", "content": None}


@pytest.mark.slow
def test_the_progress_line_shows_the_tools_own_progress(work: Path, tmp_path: Path) -> None:
    """The tool's progress report (2 of 5, its message: an escape sequence in it neutralised) follows
    the label on the terminal's progress line, erased once the call ends; stdout holds the result."""
    go = tmp_path / "go"
    terminal = Terminal(work, "asking_steps", env=_env(ASKING_GO=str(go)))
    terminal.expect("running asking_steps: 2/5 indexing [31m pages (")  # then the seconds so far
    go.touch()
    code, stdout = terminal.finish()
    assert code == 0, terminal.screen
    assert "\x1b[31m" not in terminal.screen
    assert json.loads(stdout) == {"success": True, "result": {"done": True}}


@pytest.mark.slow
def test_the_progress_line_shows_a_served_tools_progress_too(work: Path, tmp_path: Path) -> None:
    """With --server, the tool's progress notifications reach the same line."""
    go = tmp_path / "go"
    server = ServedWorkflow(work, _env(ASKING_GO=str(go)), [str(SCRIPT), "-p", str(PACK), "serve", "--port", "0"])
    try:
        terminal = Terminal(work, "--server", server.url, "asking_steps", env=_env(COLUMNS="200"))
        terminal.expect(f"running asking_steps on {server.url}: 2/5 indexing [31m pages (")
        go.touch()
        code, stdout = terminal.finish()
    finally:
        server.stop()
    assert code == 0, terminal.screen
    assert json.loads(stdout) == {"success": True, "result": {"done": True}}


DETAILS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 5},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "ok": {"type": "boolean"},
    },
    "required": ["title", "size", "ok"],
}


def test_form_fields_typed_checked_and_confirmed() -> None:
    """What the prompt and the flags stand on: typed input by the field's kind, an answer's problems,
    what --yes gives, and the example answer a failure shows."""
    fields = {field.name: field for field in fields_of(DETAILS)}
    assert parse_typed(fields["size"], "2") == "l"
    assert parse_typed(fields["size"], "Small") == "s"
    assert parse_typed(fields["tags"], "b, 1") == ["b", "a"]
    assert parse_typed(fields["ok"], "Yes") is True
    with pytest.raises(ValueError, match="type a whole number"):
        parse_typed(fields["count"], "2.5")
    with pytest.raises(ValueError, match="title must be at most 5 characters long"):
        parse_typed(fields["title"], "too long")
    assert problems(fields.values(), {"title": "x", "size": "m", "ok": 1, "count": True}) == [
        "count must be an integer, not true",
        'size must be one of s, l, not "m"',
        "ok must be a boolean, not 1",
    ]
    assert confirmation(list(fields.values())) is None  # title and size have no default
    assert confirmation(fields_of({"properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "default": 2}}}))
    assert example(list(fields.values())) == {"title": "...", "size": "s", "ok": True}
    # A server's key or choice reaches the terminal as words, never as an escape sequence.
    hostile = fields_of({"properties": {"x\x1b[2J": {"enum": ["a\x1b]0;pwned\x07"]}}, "required": ["x\x1b[2J"]})
    (message,) = problems(hostile, {"x\x1b[2J": "b"})
    assert "\x1b" not in message and "\x07" not in message and message.startswith("x [2J must be one of a ]0;pwned")
