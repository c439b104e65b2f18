"""Verify that a Kubernetes rollout delivered its configuration to every pod."""

from __future__ import annotations

__version__ = "0.1.0"
