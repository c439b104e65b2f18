"""YAML a user hands us, read without letting it cost more than its size: aliases refused while
composing (before anything is expanded), a duplicate key an error rather than the last one
silently winning, integers and scalars capped, the node count bounded. Every refusal is a
`YamlRefused` naming the line and the key path, never the value."""

from __future__ import annotations

from typing import Any

import yaml

MAX_INT_DIGITS = 30  # more digits than any port, status, count or duration could need
MAX_SCALAR = 64 * 1024  # characters in one value
MAX_NODES = 20_000  # keys, values and list items in one document


class YamlRefused(Exception):
    """Input refused for its shape; `line` is 1-based, `message` names no value."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses what can make a small file expensive or ambiguous."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._path: list[str | int] = []  # where the node being composed sits, for messages

    def _where(self) -> str:
        out = ""
        for part in self._path:
            out += (
                f"[{part}]" if isinstance(part, int) else f".{_shown_key(part)}" if out else _shown_key(part)
            )
        return f"{out}: " if out else ""

    def compose_node(self, parent: Any, index: Any) -> Any:
        # PyYAML composes a mapping's value with its key node as `index`, a list item with its position
        step = index if isinstance(index, int) else getattr(index, "value", None)
        pushed = isinstance(step, int | str)
        if pushed:
            self._path.append(step)  # type: ignore[arg-type]
        try:
            return self._compose_checked(parent, index)
        finally:
            if pushed:
                self._path.pop()

    def _refuse(self, what: str, event: Any) -> YamlRefused:
        mark = getattr(event, "start_mark", None)
        return YamlRefused(f"{self._where()}{what}", line=(mark.line if mark else 0) + 1)

    def _compose_checked(self, parent: Any, index: Any) -> Any:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise self._refuse(
                "uses a YAML alias (*name); write the value out instead (aliases are refused: a few "
                "lines of them can expand to gigabytes)",
                event,
            )
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise self._refuse(f"has more than {MAX_NODES} values; is it the right file?", event)
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_SCALAR:
            raise self._refuse(f"holds a value longer than {MAX_SCALAR // 1024} KiB", event)
        node = super().compose_node(parent, index)
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
                if key in seen:
                    raise self._refuse(f'repeats the key "{_shown_key(key)}"; keep one', key_node)
                seen.add(key)
        elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int":
            digits = sum(c.isalnum() for c in str(node.value).removeprefix("0x").removeprefix("0o"))
            if digits > MAX_INT_DIGITS:
                raise self._refuse(f"holds a number of {digits} digits (at most {MAX_INT_DIGITS})", node)
        return node


def _shown_key(key: Any) -> str:
    text = "".join(c if c.isprintable() else "?" for c in str(key))
    return text if len(text) <= 40 else text[:40] + "…"


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree (for line numbers) and the data of one document, both refused alike."""
    node = yaml.compose(text, Loader=_Loader)
    data = yaml.load(text, Loader=_Loader)
    return node, data
