"""The ``template_api`` pack: the tools generated from its OpenAPI document, as you choose to serve them.

Yours to edit: the generator rewrites only generated.py. Drop a tool from the list, add your own,
or widen the permissions when you point base_url at another host.
"""

from __future__ import annotations

from lorenz.authoring import Pack, Permissions

from .generated import CREDENTIAL_ENV, HOSTS, TOOLS, TemplateApiOptions

__all__ = ["PACK"]

PACK = Pack(
    name="template_api",
    options=TemplateApiOptions,
    tools=[*TOOLS],
    # What the pack may reach when sandboxed: the document's servers and the credentials' variables.
    permissions=Permissions(network=list(HOSTS), env=list(CREDENTIAL_ENV)),
)
