"""The ``lorenz`` command line: :func:`main` parses it and runs one of the commands in
:mod:`lorenz.cli.commands`. Internal but for :func:`main` (the ``lorenz`` console script).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lorenz.plugins.containment import describe_exception, install_interrupt_flag
from lorenz.redact import redact_text, redacted_traceback

from .commands import COMMANDS, TABLE
from .output import UsageError, json_object, paint, print_json, silence_stdout
from .parser import build_parser

if TYPE_CHECKING:
    import argparse

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``lorenz`` command; its exit status.

    The cyclic garbage collector is paused while the command starts, and for a brief command
    (:attr:`lorenz.cli.command.Command.brief`) until it ends: start-up creates many objects that live
    until exit and next to no garbage cycles. When the command is the process's own (``argv`` is
    ``None``: the console script, ``python -m lorenz``), those objects are then frozen
    (:func:`gc.freeze`), so the collector does not pass over them again before the process exits.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(argv, collecting)
    finally:
        if collecting and not gc.isenabled():  # still paused: a brief command (or one that failed to start)
            if argv is None:
                gc.freeze()
            gc.enable()


def _run(argv: Sequence[str] | None, collecting: bool) -> int:
    install_interrupt_flag()  # a real Ctrl-C still stops the command; a plugin's KeyboardInterrupt does not
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    plugin_word = _plugin_command_word(words)
    if plugin_word is not None:  # a command Lorenz does not have: a plugin's, if one registers it
        code = _run_plugin_command(plugin_word, words, collecting)
        if code is not None:
            return code
    elif _before_command(words):
        _list_plugin_commands(parser, words)
    args = parser.parse_args(words)
    args.plugin = [*args.plugin, *getattr(args, "sub_plugin", [])]
    args.plugins_dir = [*args.plugins_dir, *getattr(args, "sub_plugins_dir", [])]
    args.verbose = args.verbose or getattr(args, "sub_verbose", False)
    command = COMMANDS[args.command]
    if collecting and not command.brief:
        gc.enable()
    try:
        code = command.run(args)
        sys.stdout.flush()  # a closed pipe shows up here, not in the interpreter's last flush
    except BrokenPipeError:
        return silence_stdout()
    except UsageError as exc:
        return _failed(args, str(exc), exc.__cause__)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # unforeseen (a bug, the system): one line, the traceback with -v
        return _failed(args, describe_exception(exc), exc, hint=True)
    return code


def _plugin_command_word(words: list[str]) -> tuple[int, str] | None:
    """Where the command's word is and what it is, when it names no built-in command (the global
    options that take a value skipped, so a ``-p`` module is not taken for it)."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-p", "--plugin", "--plugins-dir"):
            index += 2
        elif word.startswith("-"):
            index += 1
        else:
            return None if word in TABLE else (index, word)
    return None


def _before_command(words: list[str]) -> bool:
    """Whether ``-h`` comes before any command: ``lorenz --help``, not ``lorenz tools --help``."""
    for word in words:
        if word in ("-h", "--help"):
            return True
        if word in TABLE:
            return False
    return False


def _run_plugin_command(found: tuple[int, str], words: list[str], collecting: bool) -> int | None:
    """Run the plugin command ``found`` names; ``None`` when no plugin registers it."""
    import argparse

    from .plugin_commands import run_plugin_command  # only for a word no built-in command has

    if collecting:
        gc.enable()  # a plugin's command may run long, as the commands that run tools do
    args = argparse.Namespace(verbose=bool({"-v", "--verbose"}.intersection(words[: found[0]])))
    try:
        return run_plugin_command(found[0], words)
    except UsageError as exc:
        return _failed(args, str(exc), exc.__cause__)
    except Exception as exc:  # the plugin's code, contained: one line, the traceback with -v
        return _failed(args, describe_exception(exc), exc, hint=True)


def _list_plugin_commands(parser: argparse.ArgumentParser, words: list[str]) -> None:
    """Add the plugin commands to ``lorenz --help``."""
    import argparse

    from .plugin_commands import help_listing  # only for lorenz --help

    listing = help_listing(words)
    if listing:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = f"{listing}\n\n{parser.epilog}"


def _failed(args: argparse.Namespace, message: str, cause: BaseException | None, *, hint: bool = False) -> int:
    """One redacted line on stderr (and ``{"version", "error"}`` on stdout under ``--json``); with ``-v``
    the traceback of what caused it."""
    message = redact_text(message)  # the environment's secrets: settings may not exist yet
    try:
        if getattr(args, "json", False):
            print_json(json_object(error=message))
        print(f"{paint('lorenz:', 'red', sys.stderr)} {message}", file=sys.stderr)
        if args.verbose and cause is not None:
            print(redacted_traceback(cause), file=sys.stderr)
        elif hint and not args.verbose:
            print("(lorenz -v shows the traceback)", file=sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:
        return silence_stdout()
    return 1


if __name__ == "__main__":
    sys.exit(main())
