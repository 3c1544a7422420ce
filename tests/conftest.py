"""Settings for the whole suite."""

from hypothesis import settings

# The suite gates CI: property tests explore the same examples on every run
# (a failure found once is kept as an explicit test), so a run is repeatable.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")
