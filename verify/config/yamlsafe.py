"""YAML a user hands us, read without letting it cost more than its size: aliases refused while
composing (before anything is expanded), a duplicate key an error rather than the last one
silently winning, integers and scalars capped, the node count bounded. Every refusal is a
`YamlRefused` naming the line and the key path, never the value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

MAX_INT_DIGITS = 30  # more digits than any port, status, count or duration could need
MAX_SCALAR = 64 * 1024  # characters in one value
MAX_NODES = 20_000  # keys, values and list items in one document


@dataclass(frozen=True)
class Budget:
    """What one document may cost: a --config file is small; a kubeconfig may embed CA bundles
    (one base64 value of hundreds of KiB) and hold many contexts."""

    max_scalar: int = MAX_SCALAR
    max_nodes: int = MAX_NODES
    # False: any alias is refused. True: aliases count what they expand to against max_nodes
    # (go-yaml, which kubectl reads kubeconfigs with, accepts them within an expansion budget)
    aliases: bool = False
    # False: a repeated key is an error. True: the last one wins, as go-yaml's non-strict decoding
    # of a kubeconfig does
    duplicates: bool = False


CONFIG_FILE = Budget()
KUBECONFIG = Budget(max_scalar=8 * 1024 * 1024, max_nodes=200_000, aliases=True, duplicates=True)


class YamlRefused(Exception):
    """Input refused for its shape; `line` is 1-based, `message` names no value."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses what can make a small file expensive or ambiguous."""

    budget = CONFIG_FILE

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._sizes: dict[int, int] = {}  # id(anchored node) -> the nodes it expands to
        self._open: set[str] = set()  # anchors of the collections being composed
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
        budget = self.budget
        if isinstance(event, yaml.AliasEvent) and budget.aliases:
            if event.anchor in self._open:
                raise self._refuse("uses a YAML alias inside its own anchor (a recursive value)", event)
            anchored = self.anchors.get(event.anchor)
            size = self._expanded(anchored, event) if anchored is not None else 0
            self._nodes += size
            if self._nodes > budget.max_nodes:
                raise self._refuse(
                    f"expands to more than {budget.max_nodes} values through YAML aliases; write it out",
                    event,
                )
            return super().compose_node(parent, index)
        if isinstance(event, yaml.AliasEvent):
            raise self._refuse(
                "uses a YAML alias (*name); write the value out instead (aliases are refused: a few "
                "lines of them can expand to gigabytes)",
                event,
            )
        self._nodes += 1
        if self._nodes > budget.max_nodes:
            raise self._refuse(f"has more than {budget.max_nodes} values; is it the right file?", event)
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > budget.max_scalar:
            raise self._refuse(f"holds a value longer than {budget.max_scalar // 1024} KiB", event)
        anchor: str | None = getattr(event, "anchor", None)
        opened = isinstance(event, yaml.CollectionStartEvent) and anchor is not None
        if anchor is not None and opened:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            if anchor is not None and opened:
                self._open.discard(anchor)
        if isinstance(node, yaml.MappingNode) and not budget.duplicates:
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

    def _expanded(self, node: yaml.Node, event: Any) -> int:
        """How many nodes `node` (complete: recursive aliases are refused before) stands for with
        every alias inside it written out, memoised per node so a chain of doubling aliases costs
        one pass."""
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        size = 1
        if isinstance(node, yaml.MappingNode):
            size += sum(self._expanded(k, event) + self._expanded(v, event) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            size += sum(self._expanded(item, event) for item in node.value)
        self._sizes[key] = size
        return size


def _shown_key(key: Any) -> str:
    text = "".join(c if c.isprintable() else "?" for c in str(key))
    return text if len(text) <= 40 else text[:40] + "…"


class _KubeconfigLoader(_Loader):
    budget = KUBECONFIG


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree (for line numbers) and the data of one document, both refused alike."""
    node = yaml.compose(text, Loader=_Loader)
    data = yaml.load(text, Loader=_Loader)
    return node, data


def load_kubeconfig(text: str) -> Any:
    """A kubeconfig's data, refused as a --config file is (aliases, duplicate keys, huge integers)
    within the larger kubeconfig budget. kubectl itself never writes an alias."""
    return yaml.load(text, Loader=_KubeconfigLoader)
