"""agents/apps/web."""
