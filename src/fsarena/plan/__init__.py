"""The plan: suites (built-in TOML and the user's), flags, the dataset catalog, machine
profiles as data, dataset floors; validated completely before anything runs.
"""
