"""What a large catalog needs: a search over its tools, and what each tool costs an agent's context.

The host, not a plugin, owns these: a search must answer with exactly the tools ``tools/list``
would show the same caller (its token's scope, its OAuth scopes, ``server.disabled_tools``), and
those grants live in the core.
"""
