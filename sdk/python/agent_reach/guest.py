"""The bridge between a :class:`~agent_reach.Skill` and the component's
``guest`` export — what componentize-py calls."""

import json
import os

from . import _bindings
from .errors import ToolError
from .fs import working_dir


def _wit_manifest(skill):
    g = _bindings.guest
    m = skill.manifest()
    return g.Manifest(
        name=m["name"],
        version=m["version"],
        description=m["description"],
        tools=[
            g.Tool(
                name=t["name"],
                description=t["description"],
                parameters=json.dumps(t["parameters"], ensure_ascii=False),
                examples=[
                    g.Example(
                        description=e["description"],
                        arguments=json.dumps(e["arguments"], ensure_ascii=False),
                        output=e["output"],
                    )
                    for e in t["examples"]
                ],
            )
            for t in m["tools"]
        ],
        instructions=m["instructions"],
    )


def _wit_error(err):
    g = _bindings.guest
    # The SDK's codes are named like the WIT enum's cases.
    return _bindings.Err(g.ToolError(code=getattr(g.ErrorCode, err.code.name), message=err.message))


def export(skill):
    """The ``Guest`` class componentize-py looks for in the app module.

    Write it as the last line of ``app.py``, after every tool::

        Guest = export(skill)

    ``describe`` answers the skill's manifest; ``call`` runs a tool and
    turns a :class:`ToolError` into the WIT ``tool-error``. No exception
    leaves ``call``: one that did would trap the instance, which the host
    reports as a crash with no message the model can use.

    Outside a component (no bindings) the class still works, answering the
    manifest as a dict and raising :class:`ToolError`, so ``app.py`` can be
    imported by an ordinary interpreter in tests.
    """
    base = _bindings.exports.Guest if _bindings.IN_COMPONENT else object

    class Guest(base):
        """The skill's ``agent-reach:skill/guest`` export."""

        def describe(self):
            """The manifest."""
            if not _bindings.IN_COMPONENT:
                return skill.manifest()
            return _wit_manifest(skill)

        def call(self, tool, arguments):
            """Run one tool; the result text, or the WIT error raised as ``Err``."""
            if not _bindings.IN_COMPONENT:
                return skill.call(tool, arguments)
            # The Python runtime starts in `/`. When the host's working directory lies inside
            # a granted folder, a plain open("notes/a.txt") then means what the model meant;
            # otherwise WASI has nowhere to change to, and `fs.resolve()`/`fs.open()` do it.
            try:
                os.chdir(working_dir())
            except OSError:
                pass
            try:
                return skill.call(tool, arguments)
            except ToolError as err:
                raise _wit_error(err) from None
            except BaseException as err:  # noqa: BLE001 - a bug here must not trap either
                failure = ToolError(f"{tool}: internal error in agent_reach: {type(err).__name__}: {err}")
                raise _wit_error(failure) from None

    Guest.__qualname__ = Guest.__name__ = "Guest"
    return Guest
