"""The entry point: registers the ``quota`` middleware provider (no I/O, nothing imported yet)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lorenz import Middleware, MiddlewareProvider, Settings, hookimpl


class QuotaProvider:
    """Builds the quota middleware from ``server.middleware_options.quota``."""

    name = "quota"

    def create(self, options: Mapping[str, Any], settings: Settings) -> Middleware:
        from .middleware import QuotaMiddleware  # logging, redis: only a workflow that names the quota
        from .options import parse_options  # only a workflow that names the quota

        return QuotaMiddleware(parse_options(options, settings))


@hookimpl
def lorenz_call_middleware(register: Callable[[MiddlewareProvider], None]) -> None:
    register(QuotaProvider())
