"""``lorenz completion bash|zsh|fish``: a shell completion script, generated from the argument parser
(every command and option), that asks ``lorenz completion --names packs|tools`` for the installed packs
and the mounted tools when a command takes one."""

from __future__ import annotations

import argparse

from lorenz.cli.command import Command
from lorenz.cli.output import UsageError
from lorenz.cli.workflow_edit import named_packs
from lorenz.cli.workspace import load_plugin_modules
from lorenz.plugins.discovery import discover
from lorenz.workspace import find_workflow, open_workspace

__all__ = ["COMMAND"]

SHELLS = ("bash", "zsh", "fish")
#: The commands whose first argument is a pack, or a tool, named by the running installation.
DYNAMIC = {"mount": "packs", "unmount": "packs", "call": "tools"}


Spec = tuple[list[tuple[str, str]], list[str], dict[str, tuple[list[str], list[str]]]]


def _spec(parser: argparse.ArgumentParser) -> Spec:
    """``(commands with their help, global options, {command: (its options, its first argument's choices)})``
    of the ``lorenz`` parser (:func:`lorenz.cli.parser.build_parser` hands it over as ``args.parser``)."""
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    helps = {choice.dest: choice.help or "" for choice in sub._choices_actions}
    globals_ = [option for action in parser._actions for option in action.option_strings if option.startswith("--")]
    commands: dict[str, tuple[list[str], list[str]]] = {}
    for name, subparser in sub.choices.items():
        options = [
            option
            for action in subparser._actions
            if action.help != argparse.SUPPRESS
            for option in action.option_strings
            if option.startswith("--")
        ]
        positionals = [action for action in subparser._actions if not action.option_strings]
        choices = [str(choice) for choice in (positionals[0].choices or [])] if positionals else []
        commands[name] = (options, choices)
    return [(name, helps.get(name, "")) for name in sub.choices], globals_, commands


def _bash(spec: Spec) -> str:
    names, globals_, commands = spec
    cases = []
    for name, (options, choices) in commands.items():
        words = " ".join(choices)
        if name in DYNAMIC:
            words = f"$(lorenz completion --names {DYNAMIC[name]} 2>/dev/null)"
        cases.append(f'        {name}) options="{" ".join(options)}"; words="{words}" ;;')
    case_lines = "\n".join(cases)
    return f"""# lorenz completion for bash: eval "$(lorenz completion bash)" (in ~/.bashrc)
_lorenz() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" command="" i options="" words=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in -*) ;; *) command="${{COMP_WORDS[i]}}"; break ;; esac
    done
    if [[ -z "$command" ]]; then
        COMPREPLY=($(compgen -W "{" ".join(name for name, _ in names)} {" ".join(globals_)}" -- "$cur"))
        return
    fi
    case "$command" in
{case_lines}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _lorenz lorenz
"""


def _zsh(spec: Spec) -> str:
    names, globals_, commands = spec
    described = " ".join(f"'{name}:{text.replace(chr(39), '')}'" for name, text in names)
    cases = []
    for name, (options, choices) in commands.items():
        offered = " ".join(choices)
        if name in DYNAMIC:
            offered = f'${{(f)"$(lorenz completion --names {DYNAMIC[name]} 2>/dev/null)"}}'
        cases.append(f"        {name}) options=({' '.join(options)}); choices=({offered}) ;;")
    case_lines = "\n".join(cases)
    # `words` and `CURRENT` are zsh's own: the command line being completed
    return f"""#compdef lorenz
# lorenz completion for zsh: lorenz completion zsh > "${{fpath[1]}}/_lorenz", or eval "$(lorenz completion zsh)"
_lorenz() {{
    local command="" i
    local -a options choices commands
    for ((i = 2; i < CURRENT; i++)); do
        if [[ "${{words[i]}}" != -* ]]; then
            command="${{words[i]}}"
            break
        fi
    done
    if [[ -z "$command" ]]; then
        commands=({described})
        _describe command commands
        compadd -- {" ".join(globals_)}
        return
    fi
    case "$command" in
{case_lines}
    esac
    if [[ "${{words[CURRENT]}}" == -* ]]; then
        compadd -- $options
    else
        compadd -- $choices
        _files
    fi
}}
if [[ "${{funcstack[1]}}" == _lorenz ]]; then
    _lorenz "$@"
else
    compdef _lorenz lorenz
fi
"""


def _fish(spec: Spec) -> str:
    names, globals_, commands = spec
    lines = ["# lorenz completion for fish: lorenz completion fish > ~/.config/fish/completions/lorenz.fish"]
    for name, text in names:
        lines.append(f"complete -c lorenz -n __fish_use_subcommand -f -a {name} -d '{text.replace(chr(39), '')}'")
    for option in globals_:
        lines.append(f"complete -c lorenz -n __fish_use_subcommand -l {option[2:]}")
    for name, (options, choices) in commands.items():
        seen = f"'__fish_seen_subcommand_from {name}'"
        lines += [f"complete -c lorenz -n {seen} -l {option[2:]}" for option in options]
        if choices:
            lines.append(f"complete -c lorenz -n {seen} -f -a '{' '.join(choices)}'")
        if name in DYNAMIC:
            lines.append(
                f"complete -c lorenz -n {seen} -f -a '(lorenz completion --names {DYNAMIC[name]} 2>/dev/null)'"
            )
    return "\n".join(lines) + "\n"


def _names(args: argparse.Namespace, kind: str) -> list[str]:
    """The installed packs (and the workflow's keys), or the tools the workflow mounts; nothing on failure:
    a completion never prints an error into the user's command line."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):
        try:
            if kind == "packs":
                import os
                from pathlib import Path

                path = find_workflow(None, cwd=Path.cwd(), env=os.environ)
                keys = named_packs(path) if path is not None else []
                return sorted({*discover(plugins=load_plugin_modules(args)).tools.names(), *keys})
            workspace = open_workspace(plugins=load_plugin_modules(args), listing=True)
            try:
                return sorted(spec.name for spec in workspace.tool_specs())
            finally:
                workspace.close()
        except Exception:
            return []


def run(args: argparse.Namespace) -> int:
    if args.names:
        print("\n".join(_names(args, args.names)))
        return 0
    if args.shell is None:
        raise UsageError(f"name a shell: lorenz completion {'|'.join(SHELLS)}")
    print({"bash": _bash, "zsh": _zsh, "fish": _fish}[args.shell](_spec(args.parser.every_command())), end="")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", nargs="?", choices=SHELLS, metavar="SHELL", help=", ".join(SHELLS))
    parser.add_argument("--names", choices=("packs", "tools"), help=argparse.SUPPRESS)


COMMAND = Command(
    name="completion",
    description="Print the completion script for SHELL: it completes the commands, their options, the installed "
    "packs after lorenz mount and unmount, and the mounted tools after lorenz call. Load it from your shell's "
    "start-up file, as the first line of the script says.",
    examples=(
        'lorenz completion bash >> ~/.bashrc    # or eval "$(lorenz completion bash)" there',
        'lorenz completion zsh > "${fpath[1]}/_lorenz"',
        "lorenz completion fish > ~/.config/fish/completions/lorenz.fish",
    ),
    arguments=_arguments,
    run=run,
    brief=True,
)
