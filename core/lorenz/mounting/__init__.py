"""What a workflow serves: the packs it mounts, their flat tool namespace, the tool policy, every
installed tool for listings, and the mounted packs' skills. Internal: not part of the public API
(docs/api.md)."""
