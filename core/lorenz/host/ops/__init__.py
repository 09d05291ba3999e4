"""Operations: the landing page, health and server card, OpenTelemetry tracing, and the
event-loop watchdog."""
