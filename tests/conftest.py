"""Settings for the whole suite."""

import os

from hypothesis import settings

# The suite gates CI: property tests explore the same examples on every run
# (a failure found once is kept as an explicit test), so a run is repeatable.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")

# The agent's own language servers (basedpyright, ruff) start on the first Python
# file an agent reads or edits. The suite turns them off for every server it starts
# (the variable is inherited) except in the tests of that feature, which turn them
# on by their settings, so other tests' timings and tool results stay as they were.
os.environ.setdefault("AGENT_LSP_LANGUAGE_SERVERS", "false")

# Commands run sandboxed where bubblewrap works, and by default such a command is
# allowed without a question. The suite's tests of the questions asked about commands
# were written for commands that ask: its servers ask about sandboxed commands too
# (the variable is inherited). The sandbox's own tests choose by their settings.
os.environ.setdefault("AGENT_LSP_SANDBOXED_COMMANDS", "ask")
