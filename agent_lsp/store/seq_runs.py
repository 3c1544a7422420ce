"""A list of seqs held as runs of consecutive ones: an `assistant/message`'s
`sourceEventSeqs` in memory.

A message streamed in 2,000 deltas names its 2,000 chunk events; as a list of
ints that is ~70 KB per message, kept for the life of the open session (the
message is model history). The seqs of one message are nearly always one run
(`start..stop-1`), so the log keeps them as `SeqRuns`: a read-only sequence
of ints that compares equal to the list it stands for. The session file and
every event sent to a client still hold the plain list (`Event.to_json`).
"""

from __future__ import annotations

from array import array
from typing import Any, Iterator, Sequence

SOURCE_SEQS = "sourceEventSeqs"
MIN_SEQS = 16  # shorter lists stay lists (a run costs more than a few ints)


class SeqRuns(Sequence[int]):
    __slots__ = ("_edges", "_length")

    def __init__(self, edges: array, length: int):
        self._edges = edges  # start, stop, start, stop, ... of each run
        self._length = length

    @classmethod
    def of(cls, seqs: list[int]) -> "SeqRuns | None":
        """The runs of `seqs`, or None when they would not save memory."""
        if len(seqs) < MIN_SEQS:
            return None
        first, last = seqs[0], seqs[-1]
        one_run = type(first) is int and type(last) is int and last - first + 1 == len(seqs)
        if one_run and seqs == list(range(first, last + 1)):
            return cls(array("q", (first, last + 1)), len(seqs))  # one run: the usual message
        edges = array("q")
        previous = None
        for seq in seqs:
            if type(seq) is not int:
                return None
            if seq != previous:  # a new run (a repeated or descending seq starts one too)
                if previous is not None:
                    edges.append(previous)
                edges.append(seq)
            previous = seq + 1
        edges.append(previous)  # type: ignore[arg-type]
        if len(edges) * 2 > len(seqs):  # fragmented: no smaller than the list
            return None
        return cls(edges, len(seqs))

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[int]:
        edges = self._edges
        for i in range(0, len(edges), 2):
            yield from range(edges[i], edges[i + 1])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("seq index out of range")
        edges = self._edges
        for i in range(0, len(edges), 2):
            size = edges[i + 1] - edges[i]
            if index < size:
                return edges[i] + index
            index -= size
        raise IndexError("seq index out of range")  # pragma: no cover - lengths agree

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeqRuns):
            return self._edges == other._edges
        if isinstance(other, (list, tuple)):
            return len(other) == self._length and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def compact_source_seqs(data: dict[str, Any]) -> None:
    """Hold `data["sourceEventSeqs"]` as runs when that is smaller."""
    seqs = data.get(SOURCE_SEQS)
    if type(seqs) is list:
        runs = SeqRuns.of(seqs)
        if runs is not None:
            data[SOURCE_SEQS] = runs


def plain_data(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as JSON takes it: runs of seqs as the list they stand for."""
    seqs = data.get(SOURCE_SEQS)
    if type(seqs) is SeqRuns:
        return {**data, SOURCE_SEQS: list(seqs)}
    return data
