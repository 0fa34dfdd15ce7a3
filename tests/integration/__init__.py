"""End-to-end tests: the CLI, the pytest plugin and the harness checks on throw-away projects."""
