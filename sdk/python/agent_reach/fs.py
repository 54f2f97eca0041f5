"""Files inside the folders the operator granted.

Use ``open()`` as usual on absolute paths: the host maps each granted folder
into the sandbox at its host path, read-only or read-write, and the runtime
refuses everything else. This module adds what a skill needs around that:

- :func:`resolve` turns a path from the model into an absolute one; relative
  paths are relative to the host's working directory (the sandbox's own
  working directory is ``/``, so a bare ``open("notes.md")`` finds nothing);
- :func:`open` resolves and opens, and turns a refusal into an error that
  lists the grants (``denied``) and a missing file into one that lists the
  names nearby (``not_found``), so the model can correct itself;
- :func:`grants` and :func:`describe_grants` say what is granted.

The grants come from the sandbox's preopened folders (``wasi:filesystem/
preopens``), the same list the runtime enforces. Outside a component there
is no sandbox: no grants, and paths are relative to the process's working
directory.
"""

import builtins
import dataclasses
import difflib
import errno
import os
import posixpath

# Codecs are imported on first use, and an import first reached during a
# call fails (see `_bindings`): load the ones skills open files with now.
import encodings.cp1252  # noqa: F401
import encodings.latin_1  # noqa: F401
import encodings.utf_16  # noqa: F401
import encodings.utf_8_sig  # noqa: F401

from . import _bindings
from .errors import Denied, Failed, NotFound

#: A path was being read (or a folder listed).
READ = "read"
#: A file was being created or changed.
WRITE = "write"


@dataclasses.dataclass(frozen=True)
class Grant:
    """A folder the permission table grants to this skill.

    Attributes:
        path: The folder, as an absolute host path.
        writable: Whether the skill may create and change files in it.
    """

    path: str
    writable: bool


def grants():
    """The folders granted to this skill, longest path first (so the first
    grant that contains a path is the one the runtime applies)."""
    if _bindings.preopens is None:
        return []
    mutate = _bindings.filesystem.DescriptorFlags.MUTATE_DIRECTORY
    found = []
    for descriptor, path in _bindings.preopens.get_directories():
        with descriptor:
            try:
                writable = bool(descriptor.get_flags() & mutate)
            except Exception:  # a descriptor that cannot say is treated as read-only
                writable = False
        found.append(Grant(path, writable))
    found.sort(key=lambda g: len(g.path), reverse=True)
    return found


def _inside(path, folder):
    """Whether ``path`` is ``folder`` or under it (``/a/b`` is not under ``/a/bc``)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def grant_for(path, granted=None):
    """The grant that contains ``path`` (absolute, normalised), or ``None``."""
    for grant in grants() if granted is None else granted:
        if _inside(path, grant.path):
            return grant
    return None


def working_dir():
    """The folder relative paths are relative to: the host's working directory."""
    if _bindings.environment is not None:
        return _bindings.environment.initial_cwd() or "/"
    return os.getcwd()


def resolve(path):
    """Turn a path from the model into an absolute, lexically normalised path.

    Relative paths are relative to the host's working directory; ``..`` is
    resolved lexically. The runtime still confines every access to the
    grants (symlinks included); this only makes paths and messages exact.
    """
    path = os.fspath(path)
    if not posixpath.isabs(path):
        path = posixpath.join(working_dir(), path)
    # normpath keeps a leading "//"; a sandbox path never needs it.
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/")


def describe_grants(granted=None):
    """A readable summary of the grants: ``readable: /a, /b; writable: /c``."""
    granted = grants() if granted is None else granted

    def listed(writable):
        paths = [g.path for g in granted if g.writable == writable]
        return ", ".join(paths) if paths else "none"

    return f"readable: {listed(False)}; writable: {listed(True)}"


#: errno values that mean "the sandbox refused": outside every preopened
#: folder wasi-libc reports ENOTCAPABLE (76 on WASI), a read-only grant
#: refuses writes with EROFS, EPERM or EACCES.
_REFUSED = {errno.EACCES, errno.EPERM, errno.EROFS, getattr(errno, "ENOTCAPABLE", 76), 76}


def io_error(access, path, err, granted=None):
    """Explain an ``OSError`` on ``path`` as a :class:`ToolError` with the right code.

    A path outside every grant, or a write under a read-only grant, becomes
    ``denied`` with the grants listed, so the model stops retrying and the
    operator sees what to add to the table. A missing path becomes
    ``not_found`` naming the nearest existing folder above it (inside the
    grant) and that folder's entries closest to the missing name, so a model
    that guessed a name can use the real one in its next call.
    """
    verb = "write to" if access == WRITE else "read"
    sandboxed = _bindings.IN_COMPONENT or granted is not None
    granted = grants() if granted is None else granted
    if sandboxed:
        grant = grant_for(path, granted)
        if grant is None:
            return Denied(f"{verb} {path} is not granted ({describe_grants(granted)})")
        if access == WRITE and not grant.writable:
            return Denied(
                f"{verb} {path} is not granted: {grant.path} is read-only "
                f"({describe_grants(granted)})"
            )
        root = grant.path
    else:
        root = "/"
    code = getattr(err, "errno", None)
    if isinstance(err, FileNotFoundError) or code == errno.ENOENT:
        return not_found(path, root)
    if isinstance(err, NotADirectoryError):
        return not_found(path, root)
    if isinstance(err, IsADirectoryError):
        return Failed(f"{verb} {path}: it is a folder, not a file")
    if code in _REFUSED:
        return Denied(
            f"{verb} {path} was refused by the sandbox (it may leave its grant through a "
            f"symlink or `..`; {describe_grants(granted)})"
        )
    return Failed(f"{verb} {path}: {err.strerror or err}")


def os_error(err, tool):
    """An ``OSError`` that escaped a tool, as a :class:`ToolError` (see :func:`io_error`).

    Which access failed is guessed from the error: a read-only file system,
    or a refusal inside a read-only grant (reading there is allowed), means
    a write was tried.
    """
    path = err.filename
    if not isinstance(path, str):
        return Failed(f"{tool}: {err.strerror or err}")
    if not posixpath.isabs(path) and _bindings.IN_COMPONENT and os.getcwd() != working_dir():
        # A bare open("data/a.csv") looks under the sandbox's working
        # directory (/), not the host's: a bug in the skill, not a missing file.
        return Failed(
            f"{tool}: {path!r} was opened relative to {os.getcwd()} (the sandbox's working "
            f"directory), but relative paths mean the host's working directory ({working_dir()}); "
            "the skill should open agent_reach.fs.resolve(path) or use agent_reach.fs.open"
        )
    full = resolve(path)
    code = getattr(err, "errno", None)
    grant = grant_for(full)
    under_read_only = code in _REFUSED and grant is not None and not grant.writable
    access = WRITE if code == errno.EROFS or under_read_only else READ
    failure = io_error(access, full, err)
    failure.message = f"{tool}: {failure.message}"
    return failure


def open(path, mode="r", **kwargs):  # noqa: A001 - the point is to read like open()
    """``open()`` for a path from the model: resolved with :func:`resolve`,
    and an ``OSError`` turned into a :class:`ToolError` by :func:`io_error`.

    Text modes default to UTF-8 (a file from another system is not decoded
    with whatever the sandbox's locale is).
    """
    full = resolve(path)
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    access = WRITE if any(c in mode for c in "wax+") else READ
    try:
        return builtins.open(full, mode, **kwargs)
    except OSError as err:
        raise io_error(access, full, err) from None


#: Most entry names a ``not_found`` message offers.
MAX_OFFERED = 20
#: Longest ``not_found`` message the offered names may grow to.
MAX_MESSAGE = 1500
#: Most entries of one folder that are ranked; the rest are only counted.
MAX_RANKED = 10_000


def not_found(path, root):
    """The error for a ``path`` that does not exist under ``root`` (its
    grant): the nearest folder above it that exists, and that folder's
    entries, the ones most like the missing name first."""
    message = f"{path}: no such file or folder"
    # Only folders inside the grant are listed: the sandbox would refuse the
    # others anyway, and a native test run (no sandbox) stays honest. A file
    # where a folder was expected fails like a missing folder: climb on.
    folder = posixpath.dirname(path)
    listing = None
    while _inside(folder, root):
        try:
            listing = os.scandir(folder)
            break
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as err:
            return NotFound(f"{message}. {folder} exists but could not be listed ({err.strerror})")
        if folder == "/":
            break
        folder = posixpath.dirname(folder)
    if listing is None:
        return NotFound(message)
    shown = folder.rstrip("/") + "/"
    rest = path[len(shown):] if path.startswith(shown) else posixpath.basename(path)
    missing = rest.split("/", 1)[0]
    with listing:
        names, total = _closest_entries(listing, missing)
    if total == 0:
        return NotFound(f"{message}. {shown} is empty")
    hint = " — use one of these names, or list the folder"
    message += f". {shown} has: "
    tail = len(f" ({total} more){hint}")
    offered = []
    for name in names[:MAX_OFFERED]:
        extra = len(name) + (2 if offered else 0)
        if len(message) + sum(len(n) + 2 for n in offered) + extra + tail > MAX_MESSAGE:
            break
        offered.append(name)
    if not offered:
        return NotFound(f"{message[:-2]} {total} entries; list the folder to see them")
    message += ", ".join(offered)
    if len(offered) < total:
        message += f" ({total - len(offered)} more)"
    return NotFound(message + hint)


def _closest_entries(entries, missing):
    """Entry names, most like ``missing`` first, folders with a trailing ``/``;
    and how many entries there are in all."""
    ranked = []
    total = 0
    for entry in entries:
        total += 1
        if len(ranked) >= MAX_RANKED:
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        name = entry.name + ("/" if is_dir else "")
        ranked.append((-similarity(entry.name, missing), name))
    ranked.sort()
    return [name for _, name in ranked], total


def similarity(a, b):
    """How alike two names are, from 0 to 1. Case and the choice between
    ``-``, ``_`` and space are ignored (the usual slips when guessing a
    name), and the names without their extensions count too, so
    ``report.txt`` is close to ``report.md``."""

    def key(s):
        return s.lower().replace("-", "_").replace(" ", "_")

    a, b = key(a), key(b)
    whole = difflib.SequenceMatcher(None, a, b).ratio()
    stems = difflib.SequenceMatcher(None, posixpath.splitext(a)[0], posixpath.splitext(b)[0]).ratio()
    return max(whole, stems)
