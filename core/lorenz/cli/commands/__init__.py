"""The ``lorenz`` commands, one module each, and :data:`COMMANDS`, the registry the parser, the dispatch
and the suggestion for a misspelled command are built from. A new command is a module that declares its
``COMMAND`` and one line below."""

from __future__ import annotations

from lorenz.cli.command import Command

from . import (
    call,
    calls,
    check,
    completion,
    connect,
    import_config,
    install,
    issues,
    lint,
    mount,
    new_pack,
    plugins,
    serve,
    skills,
    tools,
    uninstall,
    unmount,
)

__all__ = ["COMMANDS"]

#: By name, in the order ``lorenz --help`` lists them.
COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        plugins.COMMAND,
        check.COMMAND,
        tools.COMMAND,
        call.COMMAND,
        issues.COMMAND,
        serve.COMMAND,
        new_pack.COMMAND,
        lint.COMMAND,
        install.COMMAND,
        uninstall.COMMAND,
        mount.COMMAND,
        unmount.COMMAND,
        import_config.COMMAND,
        connect.COMMAND,
        calls.COMMAND,
        skills.COMMAND,
        completion.COMMAND,
    )
}
