"""agents/apps."""
