"""`python -m verify` and the `rollout-verify` console script.

Collecting is off from the first import: start-up only allocates what lives for the whole run
(modules, the client), and `verify.cli` turns collecting back on once connected (`_started`).

pydantic looks for plugins when it builds its first model: an entry-point scan of every installed
distribution (pydantic/plugin/_loader.py `get_plugins`), which no run uses. The start-up's models
(pydantic-settings' own and the settings) are built with it off, by pydantic's own switch; the
variable is taken back before the run starts, so exec credential plugins get the environment as
it was given, as kubectl passes it."""

from __future__ import annotations

import gc
import os

gc.disable()

_NO_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
_switched = _NO_PLUGINS not in os.environ
if _switched:
    os.environ[_NO_PLUGINS] = "__all__"

from verify.cli import main  # noqa: E402  (after gc.disable: its imports are the start-up)

if _switched:
    del os.environ[_NO_PLUGINS]

if __name__ == "__main__":
    main()
