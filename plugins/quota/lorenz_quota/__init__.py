"""lorenz-quota: rate limits, quotas and concurrency caps around tool calls, as call middleware.

Active only when a workflow lists ``quota`` in ``server.middleware``; see the README.
"""
