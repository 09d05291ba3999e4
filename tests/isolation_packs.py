"""Distributions the isolation tests install into a site directory (not a test module)."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

#: ``acme``: one tool per way a pack can take its process down, and well-behaved ones.
ACME = """
import asyncio, ctypes, os, subprocess, sys, time

import anyio.to_thread

from lorenz import ToolSpec, hookimpl, run_in_thread, tool_success

TOOLS = (
    "echo", "pid", "env", "segv", "exit", "alloc", "spin", "thread", "sleep", "log", "big",
    "spawn", "raise", "forge", "flood", "report", "whoami", "write",
)


class Custom(BaseException):
    pass


#: The ``acme_sleep`` calls asked to meet so far, and the event the last of them sets.
MEETING = {"count": 0, "all_in": None}


#: Forks, starts a new session, forks again and says the daemon's pid: it escapes any process group.
DAEMON = (
    "import os, sys, time\\n"
    "if os.fork():\\n    os._exit(0)\\n"
    "os.setsid()\\n"
    "if os.fork():\\n    os._exit(0)\\n"
    "print(os.getpid(), flush=True)\\n"
    "devnull = os.open(os.devnull, os.O_RDWR)\\n"
    "for fd in (0, 1, 2):\\n    os.dup2(devnull, fd)\\n"
    "time.sleep(600)\\n"
)


class Acme:
    name = "acme"

    def validate_options(self, options):
        if "bad" in options:
            raise ValueError("tools.acme.bad: not an option of acme")

    def tool_specs(self, settings):
        # acme_whoami takes an OAuth scope of its own: it crosses the pipe with the spec.
        own = {"whoami": ("acme:who",)}
        return [ToolSpec(name=f"acme_{tool}", description=f"{tool}.", auth=own.get(tool, ())) for tool in TOOLS]

    async def execute_tool(self, name, input, context):
        settings = context.settings
        if name == "acme_echo":
            return tool_success({
                "input": input,
                "apiKey": settings.tracker.api_key,
                "serverToken": settings.server.token,
                "tools": sorted(settings.tool_options or {}),
                "secrets": sorted(settings.secrets),
            })
        if name == "acme_pid":
            return tool_success({"pid": os.getpid()})
        if name == "acme_env":
            return tool_success({"names": sorted(os.environ)})
        if name == "acme_segv":
            ctypes.string_at(0)
        if name == "acme_exit":
            os._exit(3)
        if name == "acme_alloc":
            return tool_success({"size": len(bytearray(4 * 1024**3))})
        if name == "acme_spin":  # holds its event loop; says it began in the file `began` names, if any
            if input.get("began"):
                open(input["began"], "w").close()
            while True:
                pass
        if name == "acme_thread":  # a thread that never returns, awaited without abandon_on_cancel
            await anyio.to_thread.run_sync(time.sleep, 10**6)
        if name == "acme_sleep":
            began = time.monotonic()
            if input.get("meet"):  # until that many calls are asleep here at once (at most `seconds`)
                if MEETING["all_in"] is None:
                    MEETING["all_in"] = asyncio.Event()
                MEETING["count"] += 1
                if MEETING["count"] >= input["meet"]:
                    MEETING["all_in"].set()
                try:
                    await asyncio.wait_for(MEETING["all_in"].wait(), input.get("seconds", 0.5))
                except asyncio.TimeoutError:
                    return tool_success({"pid": os.getpid(), "met": False})
                return tool_success({"pid": os.getpid(), "met": True})
            await asyncio.sleep(input.get("seconds", 0.5))
            return tool_success({"pid": os.getpid(), "began": began, "ended": time.monotonic()})
        if name == "acme_log":
            print("acme says", input.get("text"), file=sys.stderr)
            print("acme prints to stdout too")
            return tool_success()
        if name == "acme_spawn":  # a plain child, a setsid one, and a double-forked daemon
            sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            plain = subprocess.Popen(sleeper, **quiet)
            session = subprocess.Popen(sleeper, start_new_session=True, **quiet)
            daemon = subprocess.run([sys.executable, "-c", DAEMON], capture_output=True, check=True)
            return tool_success({"pids": [plain.pid, session.pid, int(daemon.stdout)]})
        if name == "acme_raise":  # what Python keeps for itself, raised by the pack
            kinds = {"GeneratorExit": GeneratorExit, "KeyboardInterrupt": KeyboardInterrupt, "Custom": Custom}
            raise kinds.get(input["kind"], SystemExit)(3)
        if name == "acme_forge":  # answers the other call in flight, through the child's own pipe
            import gc
            from lorenz.isolation.protocol import encode

            calls = next(obj for obj in gc.get_objects() if type(obj).__name__ == "_Calls")
            victim = min(calls._tasks)
            forged = {"op": "result", "id": victim, "nonce": "0" * 32, "success": True, "result": {"forged": True}}
            calls._out.write(encode(forged))
            await asyncio.sleep(1)
            return tool_success()
        if name == "acme_flood":  # many lines, then one with no end in sight
            os.write(2, b"".join(b"flood %d\\n" % i for i in range(input["lines"])) + b"y" * 100_000 + b"\\n")
            return tool_success()
        if name == "acme_report":  # what a call's context offers, from the pack's own process
            await context.progress(1, 2, "half way")
            await context.log("warning", "acme is half way")
            await context.log("debug", "acme detail")
            await context.progress(2, 2, "done")
            tools = ("beta_pid", "acme_report", "acme_missing")
            enabled = [tool for tool in tools if context.is_enabled(tool)]
            return tool_success({"enabled": enabled, "logLevel": context.log_level})
        if name == "acme_whoami":  # who the host says is calling (a token never crosses the pipe)
            import attrs

            caller = context.caller
            return tool_success(None if caller is None else attrs.asdict(caller))
        if name == "acme_big":
            return tool_success({"blob": "x" * input["size"]})
        if name == "acme_write":  # a write in a thread: says it began, waits at the gate, then writes
            def write():
                with open(input["began"], "wb") as began:  # FIFOs the test holds open
                    began.write(b"b")
                with open(input["gate"], "rb") as gate:
                    gate.read(1)
                with open(input["out"], "w") as out:
                    out.write("written")
                return tool_success({"written": True})

            if input.get("via") == "asyncio":
                return await asyncio.to_thread(write)
            if input.get("via") == "await":  # says it began, then awaits: a cancel stops it there
                with open(input["began"], "wb") as began:
                    began.write(b"b")
                await asyncio.sleep(600)
            return await run_in_thread(write)
        raise AssertionError(name)


@hookimpl
def lorenz_register_tool_packs(register):
    register(Acme())
"""

BETA = """
import os

from lorenz import ResourceSpec, ToolSpec, hookimpl, tool_success


class Beta:
    name = "beta"

    def tool_specs(self, settings):
        return [ToolSpec(name="beta_pid", description="Pid.")]

    def resource_specs(self, settings):
        return [ResourceSpec(uri="beta://status", name="status")]

    async def read_resource(self, uri, context):
        return tool_success([{"uri": uri, "text": "ok"}])

    async def execute_tool(self, name, input, context):
        return tool_success({"pid": os.getpid()})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Beta())
"""

#: A third-party tracker with its own pack: the host imports it (trackers run in the host).
TRACKED = """
import os

from lorenz import ToolSpec, hookimpl, tool_success


class Client:
    async def fetch_candidate_issues(self):
        return []

    async def fetch_issues_by_ids(self, ids):
        return []


class Tracker:
    kind = "trk"

    def create_client(self, settings, context):
        return Client()

    def default_tool_packs(self, settings):
        return ["trk"]


class Pack:
    name = "trk"

    def tool_specs(self, settings):
        return [ToolSpec(name="trk_key", description="Key.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"apiKey": context.settings.tracker.api_key, "pid": os.getpid()})


@hookimpl
def lorenz_register_trackers(register):
    register(Tracker())


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack())
"""

#: A third-party tracker whose default packs another distribution provides (``iso-gamma``'s), and
#: with ``assignee: me``, ``iso-beta``'s too (defaults that depend on the settings).
DESK = """
from lorenz import hookimpl


class Client:
    async def fetch_candidate_issues(self):
        return []

    async def fetch_issues_by_ids(self, ids):
        return []


class Desk:
    kind = "desk"

    def create_client(self, settings, context):
        return Client()

    def default_tool_packs(self, settings):
        return ["gamma", *(["beta"] if settings.tracker.assignee == "me" else [])]


@hookimpl
def lorenz_register_trackers(register):
    register(Desk())
"""

GAMMA = """
import os

from lorenz import ToolSpec, hookimpl, tool_success


class Gamma:
    name = "gamma"

    def tool_specs(self, settings):
        return [ToolSpec(name="gamma_pid", description="Pid.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"pid": os.getpid()})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Gamma())
"""

CRASH_AT_IMPORT = """
import ctypes

ctypes.string_at(0)
"""

FAIL_AT_IMPORT = """
import lorenz_sdk_that_does_not_exist  # noqa: F401
"""

#: Dies while listing its tools, every time: a pack that cannot even start.
CRASH_AT_START = """
import os

from lorenz import hookimpl


class Doomed:
    name = "doomed"

    def tool_specs(self, settings):
        os._exit(9)

    async def execute_tool(self, name, input, context):
        raise AssertionError


@hookimpl
def lorenz_register_tool_packs(register):
    register(Doomed())
"""

#: ``leaky``: its tools cannot be listed, and the error quotes a credential from the environment.
LEAKS_AT_START = """
import os

from lorenz import hookimpl


class Leaky:
    name = "leaky"

    def tool_specs(self, settings):
        raise RuntimeError(f"cannot list tools: upstream refused {os.environ.get('LEAKY_API_TOKEN')}")

    async def execute_tool(self, name, input, context):
        raise AssertionError


@hookimpl
def lorenz_register_tool_packs(register):
    register(Leaky())
"""

#: ``notes``: a typed pack with a tool that asks before it writes, a resource and a prompt whose
#: argument completes.
NOTES = """
import os
from pathlib import Path

from attrs import field, frozen

from lorenz import hookimpl
from lorenz.authoring import (
    CallContext, InputRound, Pack, PackContext, describe, elicit, message, prompt, resource, tool,
)


@frozen(kw_only=True)
class SaveArgs:
    text: str = field(metadata=describe("What to write."))


@frozen(kw_only=True)
class Confirm:
    confirm: bool = field(metadata=describe("Whether to write it."))


@frozen(kw_only=True)
class Saved:
    saved: bool = field(metadata=describe("Whether it was written."))
    pid: int = field(metadata=describe("The process that answered."))


@tool(
    name="notes_save",
    description="Write a note after the user confirms it.",
    input=SaveArgs,
    output=Saved,
    needs_client_input=True,
)
async def save(ctx: CallContext, args: SaveArgs) -> Saved | InputRound:
    answer = ctx.inputs.accepted("confirm", Confirm)
    if answer is None and not ctx.inputs.view("confirm").asked:
        return ctx.request_input({"confirm": elicit(f"Write {args.text!r}?", schema=Confirm)})
    if answer is None or not answer.confirm:
        return Saved(saved=False, pid=os.getpid())
    Path(ctx.settings.base_dir, "note.txt").write_text(args.text, encoding="utf-8")
    return Saved(saved=True, pid=os.getpid())


@resource("notes://status", name="status", mime_type="text/plain", description="Where the notes run.")
async def status(ctx: PackContext) -> str:
    return f"notes in pid {os.getpid()}"


@frozen(kw_only=True)
class BriefArgs:
    topic: str = field(metadata=describe("What to brief on."))


def topics(ctx: PackContext, value: str) -> list:
    if value == "files":  # what the pack's process may see of the workflow's directory
        return sorted(path.name for path in Path(ctx.settings.base_dir).iterdir())
    if value == "boom":
        raise RuntimeError("the topic index is down")
    return [f"{value}s in pid {os.getpid()}"]


@prompt("notes_brief", arguments=BriefArgs, description="Brief the agent.", complete={"topic": topics})
async def brief(ctx: PackContext, args: BriefArgs) -> list:
    return [message("user", f"Take notes on {args.topic} (pid {os.getpid()}).")]


PACK = Pack(name="notes", tools=[save], resources=[status], prompts=[brief])


@hookimpl
def lorenz_register_tool_packs(register):
    register(PACK)
"""

DISTRIBUTIONS = {
    "iso-acme": ("iso_acme", ACME),
    "iso-beta": ("iso_beta", BETA),
    "iso-notes": ("iso_notes", NOTES),
    "iso-tracked": ("iso_tracked", TRACKED),
    "iso-desk": ("iso_desk", DESK),
    "iso-gamma": ("iso_gamma", GAMMA),
    "iso-crash-import": ("iso_crash_import", CRASH_AT_IMPORT),
    "iso-fail-import": ("iso_fail_import", FAIL_AT_IMPORT),
    "iso-doomed": ("iso_doomed", CRASH_AT_START),
    "iso-leaky": ("iso_leaky", LEAKS_AT_START),
}


def write_site(root: Path) -> Path:
    """Every distribution above, installed for real (modules plus ``.dist-info``) under ``root``."""
    for dist, (module, source) in DISTRIBUTIONS.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        info = root / f"{module}-1.0.dist-info"
        info.mkdir()
        metadata = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\nRequires-Dist: lorenz-core>=0.1\n"
        (info / "METADATA").write_text(metadata, encoding="utf-8")
        entry = module.removeprefix("iso_")
        (info / "entry_points.txt").write_text(f"[lorenz.tool_packs]\n{entry} = {module}\n", encoding="utf-8")
        (info / "RECORD").write_text("", encoding="utf-8")
    return root


def workflow(directory: Path, *, tools: str = "  acme: {}\n  beta: {}\n", server: str = "", tracker: str = "") -> Path:
    """A WORKFLOW.md isolating every third-party pack, with a 2 s tool timeout."""
    tracker = tracker or "  kind: local\n  path: ./board\n"
    front = (
        f"tracker:\n{tracker}tools:\n{tools}server:\n  isolated_packs: ['*']\n  tool_timeout_seconds: 2\n"
        f"  pack_memory_mb: 512\n{server}"
    )
    path = directory / "WORKFLOW.md"
    path.write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    return path


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` is gone for good within ``within`` s: neither running nor a zombie
    waiting to be reaped."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False
