"""Command-line tools, each a module with ``main(argv=None) -> int``.

Run as ``jamb-<name>`` (``[project.scripts]``), ``python scripts/<name>.py`` or
``python -m agents.cli.<name>``: train, evaluate, play, plot, tune, bench, soak, export.
"""
