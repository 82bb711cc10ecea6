# SPDX-License-Identifier: GPL-2.0-only
"""ftrace text for the bench/ scripts: tracefs `trace`, `trace-cmd report` or schedlab's own
`--trace`, plain or .xz. One parsed record per event line; other lines (headers, comments,
lost-event markers) are skipped.

    import ftrace_text
    for comm, pid, cpu, flags, ts, name, fields in ftrace_text.records(path): ...

Each item is a string as the line has it (ts in seconds), fields the event's key=value pairs.
"""
import lzma
import re

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S{4,5})\s+(\d+\.\d+):\s+(\w+):\s+(.*)$')
FIELD = re.compile(r'(\w+)=(\S+)')


def records(path):
    """(comm, pid, cpu, flags, ts, name, fields) for each event line of the trace at `path`."""
    op = lzma.open if path.endswith('.xz') else open
    with op(path, 'rt') as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                comm, pid, cpu, flags, ts, name, rest = m.groups()
                yield comm, pid, cpu, flags, ts, name, dict(FIELD.findall(rest))
