"""The one RunResult, rendered: text lines, JSON, JUnit, Markdown and the pipeline outputs."""
