"""Helpers for the tests, the demo and the benchmarks: object builders, the CLI runner, the
fault scenarios, the real kubectl."""
