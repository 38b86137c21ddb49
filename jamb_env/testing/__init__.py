"""jamb_env/testing."""
