"""The Python script runner: runs a bundle's `scripts/*.py` inside the
sandbox, never natively.

The host calls its one tool, `run`, on behalf of a bundle's
`NAME__run_script`: it reads the script from the bundle, checks it against
the bundle's manifest digest, and sends its source here together with the
bundle's folder, which it preopens read-only beside the folders the
permission table grants the bundle. This instance has exactly the bundle's
grants (folders, hosts, credentials at egress, limits): a script that reads
outside them or reaches an ungranted host is refused by the runtime, and the
refusal comes back as `denied` listing what is granted.

Every call runs in a fresh instance (the host instantiates one per call), so
nothing a script leaves behind reaches the next one.

componentize-py keeps only the modules imported while it builds the
component (the standard library is not on disk at run time), so the
standard library a script may use is imported below, once, at build time.
Pure-Python modules vendored in the bundle are imported from the bundle's
folder at run time, like any module on `sys.path`.

Built with componentize-py against the SDK's WIT: `./build.sh OUT.wasm`.
"""

import io
import os
import sys
import traceback
from typing import Annotated, List

from agent_reach import Skill, export
from agent_reach import fs
from agent_reach.errors import Denied, Failed, InvalidArguments, ToolError

import urlfetch

# The standard library scripts may use (see the module's docstring).
import argparse  # noqa: F401
import base64  # noqa: F401
import bisect  # noqa: F401
import calendar  # noqa: F401
import collections  # noqa: F401
import collections.abc  # noqa: F401
import copy  # noqa: F401
import csv  # noqa: F401
import dataclasses  # noqa: F401
import datetime  # noqa: F401
import decimal  # noqa: F401
import difflib  # noqa: F401
import enum  # noqa: F401
import fnmatch  # noqa: F401
import fractions  # noqa: F401
import functools  # noqa: F401
import glob  # noqa: F401
import gzip  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import html  # noqa: F401
import html.parser  # noqa: F401
import itertools  # noqa: F401
import json  # noqa: F401
import math  # noqa: F401
import operator  # noqa: F401
import pathlib  # noqa: F401
import pprint  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import shlex  # noqa: F401
import statistics  # noqa: F401
import string  # noqa: F401
import struct  # noqa: F401
import textwrap  # noqa: F401
import time  # noqa: F401
import tomllib  # noqa: F401
import typing  # noqa: F401
import unicodedata  # noqa: F401
import urllib.parse  # noqa: F401
import urllib.request  # noqa: F401
import uuid  # noqa: F401
import xml.etree.ElementTree  # noqa: F401
import zlib  # noqa: F401

#: Most bytes of stdout or stderr kept; the host's max_output_kb bounds the result too.
MAX_STREAM = 200_000

skill = Skill(
    "python-runner",
    "0.1.0",
    "Runs the Python scripts of Agent Skills bundles inside the sandbox (used by the host for "
    "NAME__run_script; not offered as a skill of its own).",
)


class _Capped(io.StringIO):
    """A stream that keeps the first MAX_STREAM characters and counts the rest."""

    def __init__(self):
        super().__init__()
        self.dropped = 0

    def write(self, text):
        room = MAX_STREAM - self.tell()
        if room <= 0:
            self.dropped += len(text)
            return len(text)
        if len(text) > room:
            self.dropped += len(text) - room
            super().write(text[:room])
        else:
            super().write(text)
        return len(text)

    def text(self):
        value = self.getvalue()
        if self.dropped:
            value += f"\n[{self.dropped} more characters not kept]"
        return value


def _refusal(err):
    """A ToolError for an exception that is the sandbox saying no, else None."""
    if isinstance(err, ToolError):
        return err if err.code.name in ("DENIED",) else None
    if isinstance(err, OSError) and getattr(err, "filename", None):
        mapped = fs.os_error(err, "run_script")
        return mapped if isinstance(mapped, Denied) else None
    return None


@skill.tool()
def run(
    path: Annotated[str, "The script's absolute path inside the bundle folder."],
    source: Annotated[str, "The script's source, as checked against the bundle's digest."],
    bundle: Annotated[str, "The bundle folder (absolute), preopened read-only."],
    args: Annotated[List[str], "Command-line arguments (sys.argv[1:])."] = [],
    stdin: Annotated[str, "What the script reads from standard input."] = "",
) -> dict:
    """Run one script: `__name__ == "__main__"`, `sys.argv` = [path, *args], stdin from
    `stdin`; returns its exit status, stdout and stderr."""
    if not path.startswith(bundle.rstrip("/") + "/"):
        raise InvalidArguments(f"{path} is not inside the bundle folder {bundle}")
    try:
        code = compile(source, path, "exec")
    except SyntaxError as err:
        raise Failed(f"{os.path.basename(path)} does not compile: {err}") from None
    out, err_stream = _Capped(), _Capped()
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr, list(sys.path))
    sys.argv = [path, *args]
    sys.stdin = io.StringIO(stdin)
    sys.stdout, sys.stderr = out, err_stream
    # The script's own folder first, as `python scripts/x.py` would have it, then the bundle's.
    sys.path[:0] = [os.path.dirname(path), bundle]
    try:
        os.chdir(fs.working_dir())
    except OSError:
        pass
    status = 0
    refused = None
    try:
        with urlfetch.installed():
            exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if exit.code is not None and not isinstance(exit.code, int):
            err_stream.write(f"{exit.code}\n")
    except BaseException as exc:  # noqa: BLE001 - a script's failure is its result, not ours
        refused = _refusal(exc)
        if isinstance(exc, MemoryError):
            status = 1
            err_stream.write("MemoryError: the script ran out of memory (memory_mb for this bundle)\n")
        else:
            status = 1
            err_stream.write("".join(traceback.format_exception(exc)))
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr, sys.path[:] = saved
    if refused is not None:
        raise Denied(f"{os.path.basename(path)}: {refused.message}")
    return {"exit_code": status, "stdout": out.text(), "stderr": err_stream.text()}


Guest = export(skill)
