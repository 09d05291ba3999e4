"""Lorenz's Jira plugin: Jira Cloud over REST v3 (``jira``) or a remote MCP server (``jira-mcp``).

The modules, by what they hold: :mod:`.options` (``tracker:`` keys), :mod:`.jql`, :mod:`.adf`
(Markdown ↔ Atlassian Document Format), :mod:`.normalize`, :mod:`.rest` and :mod:`.mcp_client`
(the two transports), :mod:`.tracker` (providers), :mod:`.tools` (the ``jira`` pack, its typed
tools in :mod:`.handlers`, :mod:`.inputs`, :mod:`.outputs`, :mod:`.failures`) and
:mod:`.plugin` (hooks only).
"""

__version__ = "0.1.0"
