"""jamb_env/utils."""
