# SPDX-License-Identifier: GPL-2.0-only
"""Reading ftrace text for the bench/tbhost scripts: a trace file, plain or compressed
(.xz, .zst), and an event's `key=value` fields."""
import re
import subprocess


def open_text(path):
    if path.endswith(".xz"):
        return subprocess.Popen(["xz", "-dc", path], stdout=subprocess.PIPE, text=True).stdout
    if path.endswith(".zst"):
        return subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE, text=True).stdout
    return open(path)


def fields(s):
    return dict(kv.split("=", 1) for kv in re.findall(r"\S+=\S+", s))
