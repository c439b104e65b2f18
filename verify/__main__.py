"""`python -m verify`: same as the `rollout-verify` console script."""

from __future__ import annotations

from verify.cli import main

if __name__ == "__main__":
    main()
