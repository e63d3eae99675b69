"""The plan: suites (built-in TOML and the user's), flags, the dataset catalog, machine
profiles as data, dataset floors; validated completely before anything runs.
"""

# Here, not in plan.model, so that the command line's options can show them without
# importing the plan's machinery (pydantic, the tasks): `fsarena --help` stays light.
DEFAULT_WORKDIR = "/var/tmp/fsarena"
DEFAULT_SUITE = "article-a-2006"
