"""`python -m verify` and the `rollout-verify` console script.

Collecting is off from the first import: start-up only allocates what lives for the whole run
(modules, the client), and `verify.cli` turns collecting back on once connected (`_started`)."""

from __future__ import annotations

import gc

gc.disable()

from verify.cli import main  # noqa: E402  (after gc.disable: its imports are the start-up)

if __name__ == "__main__":
    main()
