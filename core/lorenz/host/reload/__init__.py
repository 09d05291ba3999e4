"""Live reload: the workspace served (:class:`~lorenz.host.reload.live.LiveWorkspace`), its
immutable snapshots, and the watches on WORKFLOW.md and the installed distributions."""
