"""jamb_env/replay."""
