"""The ``slack`` tracker provider: options, dispatch checks and the runtime client.

The client (:mod:`.client`, the thread fold, the Web API transport, ``httpx``) loads in
:meth:`SlackTrackerProvider.create_client`, and the options (:mod:`.options`) when the tracker is
configured: neither at registration (every command registers it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lorenz import Settings, TrackerContext

if TYPE_CHECKING:
    from .client import SlackTrackerClient

__all__ = ["SlackTrackerProvider"]


class SlackTrackerProvider:
    """Tracker ``slack``: human mentions of the bot in watched channels are issues."""

    kind = "slack"

    @property
    def config_aliases(self) -> Mapping[str, str]:
        from .options import CONFIG_ALIASES

        return CONFIG_ALIASES

    @property
    def env_fallbacks(self) -> Mapping[str, str]:
        from .options import ENV_FALLBACKS

        return ENV_FALLBACKS

    @property
    def default_endpoint(self) -> str:
        from .options import DEFAULT_ENDPOINT

        return DEFAULT_ENDPOINT

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> Mapping[str, Any]:
        """Validate ``channels``, ``users``, ``bot_user_id``, ``emoji_states``… (see :mod:`.options`)."""
        from .options import parse_slack_options

        return parse_slack_options(options, context)

    def validate_dispatch(self, settings: Settings) -> None:
        """Token, no assignee, channels, bot user id, and a marker emoji that is not a status."""
        from .options import validate_slack_dispatch

        validate_slack_dispatch(settings)

    def default_tool_packs(self, settings: Settings) -> Sequence[str]:
        """The ``slack`` pack."""
        return ["slack"]

    def project_url(self, settings: Settings) -> str | None:
        """Slack's redirect to the first watched channel."""
        from .options import project_url

        return project_url(settings)

    def create_client(self, settings: Settings, context: TrackerContext) -> SlackTrackerClient:
        """A client over the Web API through the host's HTTP client (``context.http``)."""
        from .client import SlackTrackerClient  # the client and transport: on first use
        from .web_transport import SlackWebTransport  # the client and transport: on first use

        return SlackTrackerClient(settings, SlackWebTransport(settings, http=context.http))
