"""A loopback authorization server for the OAuth tests: RFC 8414 metadata with a ``jwks_uri``, a
JWKS it can rotate, real RS256/ES256 access tokens, and (through the SDK's own ``create_auth_routes``)
client registration, ``/authorize`` that approves at once and ``/token`` that issues a JWT for the
requested resource."""

from __future__ import annotations

import base64
import secrets
import threading
import time
from typing import Any

import anyio
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class Issuer:
    """Signing keys (``kid`` → key), the ones published in the JWKS, and what it was asked. An
    outage is played by ``jwks_status``/``introspection_status`` (a status to answer instead) and
    ``jwks_gate`` (the JWKS is answered once it is set)."""

    def __init__(self) -> None:
        self.base_url = ""  # set once served
        self.keys: dict[str, tuple[Any, str]] = {}
        self.published: list[str] = []
        self.jwks_fetches = 0
        self.metadata_fetches = 0
        self.jwks_status = 200
        self.introspection_status = 200
        self.jwks_gate: threading.Event | None = None
        self.subject = "alice@example.com"
        self.add_key("rsa-1", "RS256")
        self.add_key("ec-1", "ES256")
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        #: Opaque tokens and their introspection answers (RFC 7662), for client ``lorenz``.
        self.opaque: dict[str, dict[str, Any]] = {}
        self.introspections: list[str] = []

    def add_key(self, kid: str, alg: str, *, publish: bool = True) -> None:
        key = rsa.generate_private_key(65537, 2048) if alg.startswith("RS") else ec.generate_private_key(ec.SECP256R1())
        self.keys[kid] = (key, alg)
        if publish:
            self.published.append(kid)

    def token(self, kid: str = "rsa-1", **claims: Any) -> str:
        """An access token signed by ``kid``: for ``aud`` (required), this issuer, an hour."""
        key, alg = self.keys[kid]
        now = int(time.time())
        body = {"iss": self.base_url, "sub": self.subject, "client_id": "test-client", "iat": now, "exp": now + 3600}
        body.update(claims)
        return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg, headers={"kid": kid})

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            key, alg = self.keys[kid]
            algorithm = jwt.algorithms.RSAAlgorithm if alg.startswith("RS") else jwt.algorithms.ECAlgorithm
            jwk = algorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        return {"keys": keys}

    def app(self) -> Starlette:
        async def jwks(request: Request) -> JSONResponse:
            self.jwks_fetches += 1
            gate = self.jwks_gate
            if gate is not None:
                await anyio.to_thread.run_sync(gate.wait, 30)
            if self.jwks_status != 200:
                return JSONResponse({"error": "outage"}, status_code=self.jwks_status)
            return JSONResponse(self.jwks())

        async def metadata(request: Request) -> JSONResponse:
            self.metadata_fetches += 1
            issuer = AnyHttpUrl(self.base_url)
            document = build_metadata(issuer, None, ClientRegistrationOptions(enabled=True), RevocationOptions())
            body = document.model_dump(mode="json", exclude_none=True)
            return JSONResponse({**body, "jwks_uri": f"{self.base_url}/jwks"})

        async def introspect(request: Request) -> JSONResponse:
            expected = "Basic " + base64.b64encode(b"lorenz:intro-secret").decode()
            if request.headers.get("authorization") != expected:
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            token = str((await request.form()).get("token", ""))
            self.introspections.append(token)
            if self.introspection_status != 200:
                return JSONResponse({"error": "outage"}, status_code=self.introspection_status)
            return JSONResponse(self.opaque.get(token, {"active": False}))

        routes = [
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/jwks", jwks),
            Route("/introspect", introspect, methods=["POST"]),
        ]
        # The SDK's routes need the issuer URL before the port is known: a placeholder, replaced
        # in the metadata above (its own metadata route is shadowed by ours).
        sdk = create_auth_routes(
            _Provider(self),
            AnyHttpUrl("http://127.0.0.1"),
            client_registration_options=ClientRegistrationOptions(enabled=True),
        )
        return Starlette(routes=[*routes, *sdk])


class _Provider:
    """The SDK's ``OAuthAuthorizationServerProvider``, approving every authorization at once."""

    def __init__(self, issuer: Issuer) -> None:
        self.issuer = issuer

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.issuer.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.issuer.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.issuer.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.issuer.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.issuer.codes.pop(authorization_code.code, None)
        scope = " ".join(authorization_code.scopes)
        access = self.issuer.token(aud=authorization_code.resource, client_id=client.client_id, scope=scope or None)
        return OAuthToken(access_token=access, expires_in=3600, scope=scope or None)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, *args: Any) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None

    async def revoke_token(self, token: Any) -> None:
        return None
