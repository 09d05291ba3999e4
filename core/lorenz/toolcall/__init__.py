"""Running one tool call: the runner (containment, deadlines, per-pack limits), the threads a pack
starts, eager tasks, argument schema checks, and what may cross the wire in and out. Internal: not
part of the public API (docs/api.md)."""
