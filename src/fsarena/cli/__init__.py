"""The command line: the only package that prints or exits (entry point: cli.commands:main)."""
