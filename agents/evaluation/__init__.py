"""agents/evaluation."""
