"""jamb_env/render."""
