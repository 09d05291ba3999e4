"""OpenTelemetry for ``lorenz serve``, when the ``otel`` extra is installed and switched on.

The standard ``OTEL_*`` environment (or a tracer provider the embedding program installed) turns it
on. Then every MCP request is a server span (the SDK's own middleware, with ``mcp.session.id`` and
the ``mcp.server.operation.duration`` histogram added here), a ``traceparent`` header is continued
(:class:`TraceHeaders`), and backend calls through the host's httpx client are child spans.
Without the extra nothing here imports the OpenTelemetry SDK.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "TelemetryMiddleware",
    "TraceHeaders",
    "configure_server",
    "configure_tracing",
    "current_trace_id",
    "tracing_enabled",
]

logger = logging.getLogger("lorenz.host")

_EXPORTER_KEYS = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")
_enabled = False


def _sdk_installed() -> bool:
    return importlib.util.find_spec("opentelemetry.sdk") is not None


def _provider_installed() -> bool:
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def tracing_enabled() -> bool:
    """Whether :func:`configure_tracing` switched tracing on in this process."""
    return _enabled


def configure_tracing(env: Mapping[str, str]) -> bool:
    """Set up tracing (and metrics) from the standard ``OTEL_*`` environment, once per process;
    True when tracing is on. A tracer provider already installed (by a test, or a program that
    embeds the host) is used as it is."""
    global _enabled
    if _enabled:
        return True
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    wanted = any(env.get(key, "none").lower() != "none" for key in _EXPORTER_KEYS)
    if _provider_installed():
        _enabled = True
        return True
    if not wanted:
        return False
    if not _sdk_installed():
        logger.warning("lorenz: OTEL_* is set but the OpenTelemetry SDK is missing: pip install 'lorenz-core[otel]'")
        return False
    _install_sdk(env)
    _enabled = True
    return True


def _install_sdk(env: Mapping[str, str]) -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", "lorenz")})
    provider = TracerProvider(resource=resource)
    for name in _names(env.get("OTEL_TRACES_EXPORTER", "none")):
        exporter = _span_exporter(name)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    readers = [reader for name in _names(env.get("OTEL_METRICS_EXPORTER", "none")) if (reader := _metric_reader(name))]
    if readers:
        from opentelemetry.sdk.metrics import MeterProvider

        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))


def _names(value: str) -> list[str]:
    return [name.strip().lower() for name in value.split(",") if name.strip() and name.strip().lower() != "none"]


def _span_exporter(name: str) -> Any:
    if name == "console":  # stderr: under --stdio, stdout is the protocol stream
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        except ImportError:
            logger.warning("lorenz: OTEL_TRACES_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http")
            return None
        return OTLPSpanExporter()
    logger.warning("lorenz: unknown OTEL_TRACES_EXPORTER %r ignored (console, otlp or none)", name)
    return None


def _metric_reader(name: str) -> Any:
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr))
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[import-not-found]
                OTLPMetricExporter,
            )
        except ImportError:
            logger.warning("lorenz: OTEL_METRICS_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http")
            return None
        return PeriodicExportingMetricReader(OTLPMetricExporter())
    logger.warning("lorenz: unknown OTEL_METRICS_EXPORTER %r ignored (console, otlp or none)", name)
    return None


def configure_server(server: Any, env: Mapping[str, str]) -> bool:
    """Trace ``server`` (the SDK ``Server``) when tracing is on; otherwise drop the SDK's own
    OpenTelemetry middleware, which costs every message even as a no-op. True when tracing."""
    if configure_tracing(env):
        server.middleware.append(TelemetryMiddleware())
        return True
    # The host's own middleware (the requestState seal) stays.
    server.middleware = [item for item in server.middleware if type(item).__module__.startswith("lorenz.")]
    return False


def instrument_http(client: Any) -> None:
    """Make the host's backend calls child spans (when the httpx instrumentation is installed)."""
    try:
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    except ImportError:
        return
    HTTPXClientInstrumentor().instrument_client(client)


def current_trace_id() -> str | None:
    """The current span's trace id as 32 hex digits, when tracing is on and a span is active."""
    if not _enabled:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None


class TelemetryMiddleware:
    """SDK context-tier middleware inside the SDK's server span: adds ``mcp.session.id`` and records
    ``mcp.server.operation.duration`` (seconds) per request."""

    def __init__(self) -> None:
        from opentelemetry import metrics

        self._duration = metrics.get_meter("lorenz").create_histogram(
            "mcp.server.operation.duration", unit="s", description="Duration of MCP requests handled by the server"
        )

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        from opentelemetry import trace

        span = trace.get_current_span()
        request = getattr(ctx, "request", None)
        session = getattr(request, "headers", {}).get("mcp-session-id") if request is not None else None
        if session:
            span.set_attribute("mcp.session.id", session)
        attributes: dict[str, Any] = {"mcp.method.name": ctx.method, "mcp.protocol.version": ctx.protocol_version}
        name = ctx.params.get("name") if ctx.params else None
        if ctx.method == "tools/call" and isinstance(name, str):
            attributes["gen_ai.tool.name"] = name
        started = time.perf_counter()
        try:
            result = await call_next(ctx)
        except Exception as exc:
            attributes["error.type"] = type(exc).__qualname__
            raise
        else:
            if isinstance(result, Mapping) and result.get("isError") is True:  # the wire dict
                attributes["error.type"] = "tool_error"
            return result
        finally:
            self._duration.record(time.perf_counter() - started, attributes)


class TraceHeaders:
    """ASGI middleware continuing a trace from the HTTP ``traceparent``/``tracestate`` headers (a
    ``traceparent`` in ``params._meta`` still wins: the SDK's span prefers it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers", ())}
        if "traceparent" not in headers:
            await self.app(scope, receive, send)
            return
        from opentelemetry import context
        from opentelemetry.propagate import extract

        token = context.attach(extract(headers))
        try:
            await self.app(scope, receive, send)
        finally:
            context.detach(token)
