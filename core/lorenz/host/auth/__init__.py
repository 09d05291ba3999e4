"""``lorenz serve`` as an OAuth 2.1 resource server (``server.auth``): :mod:`.resource` judges a
request's token and answers refusals and the protected resource metadata, :mod:`.verifier`
checks a token, :mod:`.keys` keeps the issuer's signing keys, :mod:`.cache` its introspection
answers; :mod:`.probe` is ``lorenz check --online``."""

from __future__ import annotations

from .resource import METADATA_PATH, Refusal, ResourceServer

__all__ = ["METADATA_PATH", "Refusal", "ResourceServer"]
