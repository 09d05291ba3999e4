"""``lorenz check``: parse and validate a workflow against the installed plugins."""

from __future__ import annotations

import argparse
from typing import Any

from lorenz.cli.command import WORKFLOW_ENV, Command, add_json, add_workflow
from lorenz.cli.output import UsageError, counted, json_object, print_json, progress
from lorenz.cli.workspace import open_for_command, until_started, warn
from lorenz.client_input import serving_warnings
from lorenz.host.refusals import audience_warning, http_refusal
from lorenz.isolation.report import pack_policies
from lorenz.mounting.lifecycle import pack_health
from lorenz.plugins.validate_settings import check_pack_settings
from lorenz.redact import redact_text
from lorenz.settings.suggest import did_you_mean, quoted
from lorenz.settings.workflow import display_path

__all__ = ["COMMAND"]


def _check_object(workspace: Any, sandboxed: dict[str, Any], unready: list[Any]) -> dict[str, Any]:
    """``check --json``: what the workflow mounts, once it validated."""
    path = workspace.settings.workflow_path
    # Only when there is one: a workflow without sandboxed or unready packs keeps the object it had.
    extra: dict[str, Any] = (
        {"sandboxedPacks": {name: p.to_dict() for name, p in sandboxed.items()}} if sandboxed else {}
    )
    if unready:
        extra["notReady"] = [{"pack": failure.pack, "error": failure.error} for failure in unready]
    return json_object(
        workflow=None if path is None else str(path),
        embeddedDefault=workspace.embedded_default,
        tracker=workspace.settings.tracker.kind,
        packs=workspace.pack_names(),
        tools=[spec.name for spec in workspace.tool_specs()],
        **extra,
    )


def _sandboxed(workspace: Any) -> dict[str, Any]:
    """The sandboxed packs' effective policies (their processes started, permissions computed)."""
    policies = pack_policies(workspace.packs(), workspace.settings, workspace.discovery)
    return {name: policy for name, policy in policies.items() if policy.sandboxed}


def _unmatched_patterns(workspace: Any) -> list[str]:
    """A ``server.disabled_tools`` pattern or a scoped token's tool glob that matches no tool the
    workflow mounts (a typo switches nothing off, or grants nothing), with the closest tool name."""
    import fnmatch

    names = [spec.name for spec in workspace.tool_specs()] + list(workspace.mounted.disabled)
    server = workspace.settings.server
    patterns = [("server.disabled_tools", pattern) for pattern in server.disabled_tools]
    for index, token in enumerate(server.tokens):
        patterns += [(f"server.tokens.{index}.tools", pattern) for pattern in token.tools]
    for scope, globs in server.auth.scopes if server.auth is not None else ():
        patterns += [(f"server.auth.scopes.{scope}", pattern) for pattern in globs]
    return [
        f"{key}: {quoted(pattern)} matches no mounted tool{did_you_mean(pattern, names)}"
        for key, pattern in patterns
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names)
    ]


def _ungranted_tools(workspace: Any) -> list[str]:
    """With a ``server.auth.scopes`` map: the mounted tools no scope of it grants, which no OAuth
    caller can see or call (static tokens still can). A tool that declares its own scopes was meant
    for OAuth callers: it gets a line naming them; the others share one line."""
    import fnmatch

    auth = workspace.settings.server.auth
    if auth is None or not auth.scopes:
        return []
    globs = [pattern for _, patterns in auth.scopes for pattern in patterns]
    ungranted = [spec for spec in workspace.tool_specs() if not any(fnmatch.fnmatchcase(spec.name, g) for g in globs)]
    lines = [
        f"server.auth.scopes: no scope grants {spec.name} (which declares auth {' '.join(spec.auth)}): "
        "no OAuth caller can see or call it; add it to a scope's tool globs"
        for spec in ungranted
        if spec.auth
    ]
    plain = [spec.name for spec in ungranted if not spec.auth]
    if plain:
        shown = ", ".join(plain[:5]) + (f" and {len(plain) - 5} more" if len(plain) > 5 else "")
        them = "it" if len(plain) == 1 else "them"
        lines.append(f"server.auth.scopes: no scope grants {shown}: no OAuth caller can see or call {them}")
    return lines


def _online(server: Any) -> Any:
    """``--online``: what ``server.auth``'s issuer publishes now (``None`` without ``server.auth``)."""
    if server.auth is None:
        return None
    import asyncio

    from lorenz.host.auth.probe import ProbeError, probe_issuer  # httpx and the issuer: only --online

    try:
        return asyncio.run(probe_issuer(server.auth))
    except ProbeError as exc:
        raise UsageError(f"--online: {exc}") from None


def run(args: argparse.Namespace) -> int:
    workspace = open_for_command(args, args.workflow)
    with progress("waiting for packs still starting"):
        workspace = until_started(workspace)
    settings = workspace.settings
    where = settings.workflow_path or "embedded default"
    specs = workspace.tool_specs()
    if workspace.mounted.failures:
        broken = ", ".join(failure.pack for failure in workspace.mounted.failures)
        raise UsageError(f"{where}: the workflow mounts broken packs: {broken}")
    problems = check_pack_settings(settings, workspace.packs())
    if problems:
        raise UsageError(redact_text(f"{where}: {'; '.join(problems)}", settings.secrets))
    server = settings.server
    refusal = http_refusal(server, host=server.host, workers=server.workers, allow_no_token=False)
    if refusal is not None:  # what `lorenz serve` would refuse is no valid workflow to serve
        raise UsageError(f"{where}: lorenz serve would refuse it: {refusal}")
    shown = where if settings.workflow_path is None else display_path(settings.workflow_path)
    for warning in serving_warnings(server, workers=server.workers, asking_tools=workspace.asking_tools()):
        warn(f"warning: {shown}: {warning}")
    audience = audience_warning(server)
    for warning in [*_unmatched_patterns(workspace), *_ungranted_tools(workspace), *([audience] if audience else [])]:
        warn(f"warning: {shown}: {warning}")
    for drop in workspace.mounted.dropped:  # an upstream's listing: served without it, not an error
        warn(f"warning: {shown}: pack {drop.pack}: {drop.error}")
    unready = pack_health(workspace.packs(), settings)  # e.g. an upstream that failed, or still starting
    for failure in unready:
        warn(
            f"warning: {shown}: pack {failure.pack} is not ready, so its tools may not all be counted: {failure.error}"
        )
    online = _online(server) if args.online else None
    sandboxed = _sandboxed(workspace)
    if args.json:
        extra = {"oauth": online.wire()} if online is not None else {}
        print_json({**_check_object(workspace, sandboxed, unready), **extra})
        return 0
    for policy in sandboxed.values():
        print("\n".join(policy.lines()))
    not_ready = f"; not ready: {', '.join(failure.pack for failure in unready)}" if unready else ""
    print(
        f"ok: {where}: tracker {settings.tracker.kind or '-'}, packs {', '.join(workspace.pack_names()) or '-'} "
        f"({counted(len(specs), 'tool')}{not_ready})"
    )
    if online is not None and server.auth is not None:
        keys = ", ".join(f"{kid} ({alg})" for kid, alg in online.keys)
        found = f"metadata at {online.metadata_url}, " if online.metadata_url else ""
        print(f"ok: server.auth.issuer {server.auth.issuer}: {found}signing keys at {online.jwks_uri}: {keys}")
    elif args.online:
        print("note: --online: the workflow has no server.auth, nothing to fetch")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow(parser)
    add_json(parser)
    parser.add_argument(
        "--online",
        action="store_true",
        help="also fetch server.auth's issuer metadata and signing keys (JWKS) and report them",
    )


COMMAND = Command(
    name="check",
    description="Parse and validate a workflow against the installed plugins; on a mistake, exit 1 with the exact "
    "error naming the key at fault.",
    examples=("lorenz check", "lorenz check path/to/WORKFLOW.md --json", "lorenz check --online"),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
