"""Go's ``container/heap`` as ``schedulePod`` (v1.35.4, ``pkg/scheduler/schedule_one.go``) uses
it, written out in plain Python for the tests of the heap tie-break."""

from __future__ import annotations


def go_heap_pop_first(totals: list[int]) -> int:
    """The position (in ``totals``) of what ``schedulePod``'s first ``heap.Pop`` returns:
    ``heap.Init`` then ``heap.Pop`` of Go's ``container/heap`` (``down`` as heap.go writes
    it), with ``Less(i, j)`` = ``total[i] > total[j] || (total[i] == total[j] && rand[i] >
    rand[j])`` and every ``rand`` 0 (no extenders)."""
    items = [(position, total, 0) for position, total in enumerate(totals)]  # rand: 0

    def less(i: int, j: int) -> bool:
        return items[i][1] > items[j][1] or (items[i][1] == items[j][1]
                                             and items[i][2] > items[j][2])

    def down(i0: int, n: int) -> bool:
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n or j1 < 0:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(j2, j1):
                j = j2
            if not less(j, i):
                break
            items[i], items[j] = items[j], items[i]
            i = j
        return i > i0

    n = len(items)
    for i in range(n // 2 - 1, -1, -1):  # heap.Init
        down(i, n)
    items[0], items[n - 1] = items[n - 1], items[0]  # heap.Pop: Swap, down, then Pop()
    down(0, n - 1)
    return items.pop()[0]
