"""jamb_env/engine."""
