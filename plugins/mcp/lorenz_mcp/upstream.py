"""One upstream MCP server, supervised: connected (a stdio child in its own session, or Streamable
HTTP), its tools listed, reconnected with back-off when it ends or breaks. Its connection runs on
its *home* loop (:mod:`.home`), the host's serving loop when there is one, and callers on any other
loop cross over. Nothing blocks the host's loop but the first listing at ``lorenz serve``'s start,
bounded by ``start_timeout_seconds``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from lorenz import Backoff, redact_text, serving_loop

from .asks import Asks, Log, Suspend
from .connect import connect
from .errors import UpstreamError, describe, request_error
from .home import home_for, running_loop, start, wait_ended
from .limits import ProgressThrottle
from .lists import Lists
from .offers import LIST_CHANGED, Offers, complete, list_offers, list_tools
from .options import McpOptions, resolve_references
from .watched import NotOffered, Watched

__all__ = ["Progress", "Upstream"]

logger = logging.getLogger("lorenz_mcp")

#: Reconnection delays: 0.1 s, doubling per failure in a row, at most 30 s.
_BACKOFF = Backoff(0.1, 30.0)
#: A connection that lasted this long resets the back-off.
_STABLE_SECONDS = 60.0
_STOP_TIMEOUT = 10.0

Progress = Callable[[float, float | None, str | None], Coroutine[Any, Any, None]]


class Upstream:
    """A supervised connection to one MCP server (see the module docstring)."""

    def __init__(
        self, options: McpOptions, label: str, secrets: Sequence[str], environ: Mapping[str, str], max_bytes: int
    ) -> None:
        self.options = options
        #: The ``tools:`` key(s) mounting it, as its log lines name it.
        self.label = label
        #: The bound on every message it sends (``server.max_result_bytes`` when it started).
        self.max_bytes = max_bytes
        self._born = time.monotonic()
        self._env = {key: resolve_references(value, environ) for key, value in options.env.items()}
        self._headers = {key: resolve_references(value, environ) for key, value in options.headers.items()}
        resolved = [v for v in (*self._env.values(), *self._headers.values()) if len(v) >= 3]
        self._secrets = (*secrets, *resolved, *(v.split(" ", 1)[-1] for v in resolved if " " in v))
        self.lists = Lists(lambda: self.label)
        #: Its calls in flight, to which its requests to the client are routed.
        self._asks = Asks(options.describe(), self._redact)
        #: The resources the host watches and the log level its calls asked for.
        self.watched = Watched(lambda: self.label, self._describe)
        self.error: str | None = None
        #: Why its last re-listing failed, while it serves the listing before.
        self.list_error: str | None = None
        self.restarts = 0
        self._client: Any = None
        self._connected = asyncio.Event()
        self._broken = asyncio.Event()
        self._stopping = False
        self._stopped = asyncio.Event()  # set on the upstream's loop as it is closed
        self._starting: Any = None  # the cancel scope of a start still waiting for its first listing
        #: Set once its first start ended (listed or failed): for threads, and for the home loop.
        self._first = threading.Event()
        self._started = asyncio.Event()
        self._home = home_for(serving_loop(), f"lorenz-mcp {label}")
        self._loop = self._home.loop
        self._supervisor = start(self._supervise(), self._loop)

    # -- what the pack asks ---------------------------------------------------------------------

    def tools(self) -> tuple[dict[str, Any], ...]:
        """The upstream's tools (wire form), waiting for the first start up to its timeout;
        :class:`UpstreamError` when it has none to give."""
        self._first.wait(self.options.start_timeout_seconds + 1)
        return self._available()

    async def callable_tools(self) -> tuple[dict[str, Any], ...]:
        """:meth:`tools` for a call: on the home loop, waiting for the first start lets it run."""
        if self._first.is_set() or running_loop() is not self._loop:
            return self.tools()
        await self._until_started(self.options.start_timeout_seconds + 1)
        return self._available()

    def _available(self) -> tuple[dict[str, Any], ...]:
        tools = self.lists.tools
        if tools is None:
            problem = self.error or self._describe(TimeoutError())
            raise UpstreamError(f"MCP server {self.options.describe()}: {problem}")
        return tools

    def _wait_first(self, wait: float) -> None:
        """Wait for the first listing until ``wait`` seconds after the upstream was started: every
        hook a mount asks shares that one wait. On the home loop itself it cannot wait (what it
        waits for runs there); a host's loop not serving yet is run meanwhile."""
        timeout = max(0.0, self._born + wait - time.monotonic())
        loop, running = self._loop, running_loop()
        if self._first.is_set() or running is loop:
            return
        if self._home.owned or loop.is_running():
            self._first.wait(timeout)
        elif running is None and not loop.is_closed():
            loop.run_until_complete(self._until_started(timeout))

    async def _until_started(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._started.wait(), seconds)

    def listed(self, wait: float) -> tuple[dict[str, Any], ...]:
        """The tools as listed now, waiting up to ``wait`` seconds after its start for the first
        listing; empty while there is none (:meth:`health` says why). What it returns is what the
        host serves."""
        self._wait_first(wait)
        return self.lists.report_tools()

    def offers(self, wait: float) -> Offers:
        """Its resources, templates and prompts as listed now (see :meth:`listed`)."""
        self._wait_first(wait)
        return self.lists.report_offers()

    def health(self) -> str | None:
        """What is wrong now (not started, down and restarting, its last listing failed), or ``None``."""
        if self._client is not None:
            if self.list_error is not None:
                return f"MCP server {self.options.describe()}: listing its tools failed: {self.list_error}"
            return None
        if self.error is None:
            return f"MCP server {self.options.describe()}: starting (no tools/list answer yet)"
        again = " (being restarted)" if not self._stopping else ""
        return f"MCP server {self.options.describe()}: {self.error}{again}"

    @property
    def starting(self) -> bool:
        """Its first start has not ended yet (neither listed nor failed), or the listeners have not
        been told that it has."""
        return not self.lists.settled

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        progress: Progress | None,
        client_input: Any = None,
        suspend: Suspend | None = None,
        *,
        log: Log | None = None,
        level: str | None = None,
    ) -> Any:
        """``tools/call`` on the upstream, from any loop: the ``CallToolResult``. Cancelling the
        caller cancels the upstream request (the SDK sends ``notifications/cancelled``); what the
        upstream asks the client meanwhile is asked through ``client_input`` or handed to
        ``suspend`` (:mod:`.asks`), and its log messages at ``level`` or above go to ``log``."""
        caller = asyncio.get_running_loop()
        sent: list[concurrent.futures.Future[None]] = []

        def forward(done: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                sent.append(asyncio.run_coroutine_threadsafe(progress(done, total, message), caller))

        async def send(client: Any) -> Any:
            from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult

            await self.watched.follow_level(client, self._asks.level())
            throttle = ProgressThrottle(forward, self._loop)
            request = CallToolRequest(params=CallToolRequestParams(name=name, arguments=dict(arguments)))
            try:
                # Not ``client.call_tool``: it checks the structured result against the outputSchema
                # in pure Python, and the host checks it again (the host's check is the one that
                # answers, with jsonschema_rs).
                return await client.session.send_request(request, CallToolResult, progress_callback=throttle)
            finally:
                throttle.flush()

        with self._asks.calling(name, client_input, suspend, log, level) as call:
            result = await self._home.across(self._request(send))
        if call.declined and result.is_error:  # the client learns why, whatever the upstream made of it
            from mcp_types import TextContent

            said = " ".join(getattr(block, "text", "") for block in result.content)
            notes = [TextContent(type="text", text=why) for why in dict.fromkeys(call.declined) if why not in said]
            result = result.model_copy(update={"content": [*result.content, *notes]})
        # The progress and log messages sent before the result reach our caller before the result does.
        relayed = (*sent, *call.relayed)
        await asyncio.gather(*(asyncio.wrap_future(one) for one in relayed), return_exceptions=True)
        return result

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` on the upstream, from any loop; again after each restart."""
        self.watched.uris.add(uri)
        try:
            await self._home.across(self._request(lambda client: self._subscribe(client, uri)))
        except UpstreamError:
            self.watched.uris.discard(uri)
            raise

    async def unsubscribe(self, uri: str) -> None:
        """``resources/unsubscribe`` on the upstream, from any loop."""
        self.watched.uris.discard(uri)
        await self._home.across(self._request(lambda client: self.watched.send(client, uri, subscribe=False)))

    async def _subscribe(self, client: Any, uri: str) -> None:
        try:
            await self.watched.send(client, uri)
        except NotOffered:
            raise UpstreamError(f"MCP server {self.options.describe()} does not offer resource subscriptions") from None

    async def read(self, uri: str) -> Any:
        """``resources/read`` on the upstream, from any loop: the ``ReadResourceResult``."""
        return await self._home.across(self._request(lambda client: client.read_resource(uri, cache_mode="bypass")))

    async def prompt(self, name: str, arguments: Mapping[str, str]) -> Any:
        """``prompts/get`` on the upstream, from any loop: the ``GetPromptResult``."""
        return await self._home.across(self._request(lambda client: client.get_prompt(name, dict(arguments))))

    async def complete(
        self, ref: Mapping[str, Any], argument: Mapping[str, str], context_arguments: Mapping[str, str]
    ) -> dict[str, Any]:
        """``completion/complete`` on the upstream, from any loop: the completion in wire form (no
        values when the upstream does not declare completions)."""
        work = self._request(lambda client: complete(client, ref, argument, context_arguments))
        return await self._home.across(work)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the upstream (its process ends) and its own loop; waits a bounded time, except on
        the home loop itself (the upstream then ends while it runs on)."""
        loop = self._loop
        if loop.is_closed():
            return

        def stop() -> None:
            self._stopping = True
            self._broken.set()
            self._stopped.set()
            if self._starting is not None:  # a start hung on its listing ends now, not at its deadline
                self._starting.cancel()

        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(stop)
        wait_ended(self._home, self._supervisor, _STOP_TIMEOUT)

    # -- on the upstream's loop -----------------------------------------------------------------

    def _redact(self, text: str) -> str:
        return redact_text(text, self._secrets)

    def _describe(self, exc: BaseException) -> str:
        return describe(exc, self.options, self.max_bytes, self._redact)

    async def _supervise(self) -> None:
        import anyio

        failures = 0
        said: str | None = None  # the failure last logged as a warning: its repeats are logged as info
        while not self._stopping:
            repeated = False
            broken = self._broken = asyncio.Event()
            began = self._loop.time()
            try:
                # The deadline bounds the start only; the scope spans the connection, whose task
                # groups must close inside every scope they were opened in.
                with anyio.CancelScope(deadline=anyio.current_time() + self.options.start_timeout_seconds) as scope:
                    self._starting = scope
                    async with contextlib.AsyncExitStack() as stack:
                        client = await self._connect(stack, broken)
                        tools = await list_tools(client)
                        offers = await self._list_offers(client)
                        scope.deadline, self._starting = float("inf"), None
                        self.lists.tools, self.lists.offers, self.error, self._client = tools, offers, None, client
                        self.list_error = None
                        await self.watched.restarted(client)
                        self._connected.set()
                        self._started.set()
                        self._first.set()
                        self.lists.notify()
                        self.lists.settled = True
                        said = None
                        await broken.wait()
                        if not self._stopping:
                            self.error = "it ended, or its connection broke"
                        self._connected.clear()
                        self._client = None
                if scope.cancelled_caught and not self._stopping:
                    raise TimeoutError
            except Exception as exc:
                self.error = self._describe(exc)
                repeated, said = self.error == said, self.error
                level = logging.INFO if repeated else logging.WARNING
                logger.log(level, "pack %s: MCP server %s: %s", self.label, self.options.describe(), self.error)
                if not self.lists.settled:
                    self.lists.notify(settled=True)
            finally:
                self._starting = None
                self._connected.clear()
                self._client = None
                self._started.set()
                self._first.set()
                self.lists.settled = True
            if self._stopping:
                return
            failures = 1 if self._loop.time() - began > _STABLE_SECONDS else failures + 1
            with contextlib.suppress(TimeoutError):  # a close ends the back-off, not the other way round
                await asyncio.wait_for(self._stopped.wait(), _BACKOFF.delay(failures))
            if self._stopping:
                return
            self.restarts += 1
            level = logging.INFO if repeated else logging.WARNING
            logger.log(level, "pack %s: restarting MCP server %s", self.label, self.options.describe())

    async def _connect(self, stack: contextlib.AsyncExitStack, broken: asyncio.Event) -> Any:
        from .retry import idempotent_tools  # httpx2: only a remote upstream

        def ended(last: Sequence[str]) -> None:
            if not self._stopping:  # what it wrote last says why, whatever the log level shows
                said = " | ".join(last) if last else "nothing"
                logger.warning(
                    "pack %s: MCP server %s exited; its stderr ended with: %s",
                    self.label,
                    self.options.describe(),
                    said,
                )
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(broken.set)

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", message)
            method = getattr(root, "method", None)
            if method in LIST_CHANGED:
                self._loop.create_task(self._relist())
            elif method == "notifications/resources/updated":
                self.watched.updated(str(root.params.uri))

        return await connect(
            stack,
            self.options,
            label=lambda: self.label,
            env=self._env,
            headers=self._headers,
            secrets=self._secrets,
            max_bytes=self.max_bytes,
            ended=ended,
            idempotent=lambda: idempotent_tools(self.lists.tools or ()),
            on_message=on_message,
            callbacks=self._asks.callbacks(),
        )

    async def _relist(self) -> None:
        import anyio

        client = self._client
        if client is None:
            return
        try:
            with anyio.fail_after(self.options.timeout_seconds):
                self.lists.tools = await list_tools(client)
                self.lists.offers = await self._list_offers(client)
            self.list_error = None
            self.lists.notify()
            logger.warning("pack %s: MCP server %s changed its lists", self.label, self.options.describe())
        except Exception as exc:
            self.list_error = self._describe(exc)
            logger.warning("pack %s: re-listing tools failed: %s", self.label, self.list_error)

    async def _list_offers(self, client: Any) -> Offers:
        """Its resources, templates and prompts; none when listing them fails (its tools still serve)."""
        if not (self.options.resources or self.options.prompts):
            return Offers()
        try:
            return await list_offers(client)
        except Exception as exc:
            logger.warning("pack %s: listing resources and prompts failed: %s", self.label, self._describe(exc))
            return Offers()

    async def _request(self, send: Callable[[Any], Coroutine[Any, Any, Any]]) -> Any:
        if self._client is None:
            await self._connected.wait()  # the host's tool timeout bounds this wait
        client = self._client
        broken = self._broken
        try:
            return await send(client)
        except Exception as exc:
            raise request_error(exc, self.options, self.max_bytes, self._redact, broken) from None
