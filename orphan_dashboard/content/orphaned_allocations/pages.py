"""Marker paging over a list already in memory, Horizon's way (``marker``
for the next page, ``prev_marker`` for the previous one)."""


def page(rows, ids, marker, prev_marker, size):
    """``(rows on the page, has previous, has more)``.

    ``ids`` are the rows' object ids.  A marker no longer in the list (its
    row was repaired or the snapshot refreshed) leads to the first page.
    """
    size = max(1, size)
    if prev_marker in ids:
        end = ids.index(prev_marker)
        start = max(0, end - size)
    elif marker in ids:
        start = ids.index(marker) + 1
        end = start + size
    else:
        start, end = 0, size
    return rows[start:end], start > 0, end < len(rows)
