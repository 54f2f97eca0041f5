"""The Agent Reach skill SDK for Python: everything a skill author needs.

A skill is a WebAssembly component that the Agent Reach host runs in a
sandbox with exactly the folders, hosts and environment variables that the
operator's permission table grants it. With this package a skill is a
:class:`Skill`, a decorated function per tool (its type-annotated parameters
become the JSON Schema the model sees, and arguments arrive decoded), and
one :func:`export` line::

    from typing import Annotated

    from agent_reach import Skill, export

    skill = Skill("hello", "0.1.0", "Greets people by name.")


    @skill.tool(examples=[{"description": "Greet Ada", "arguments": {"name": "Ada"}}])
    def greet(name: Annotated[str, "Who to greet."]) -> str:
        \"\"\"Say hello to someone.\"\"\"
        return f"Hello, {name}!"


    Guest = export(skill)

Build it with componentize-py against ``wit/skill.wit`` (see the README) and
drop the ``.wasm`` into the host's skills folder. Raise :class:`ToolError`
(or :class:`InvalidArguments`, :class:`NotFound`, :class:`Denied`,
:class:`Failed`) with a message that says how to fix the call; any other
exception becomes ``failed`` with its message. :mod:`agent_reach.fs` resolves
paths and explains refusals; :mod:`agent_reach.http` makes requests the host
checks against its allowlist.

Everything a tool needs must be imported at the top of its module:
componentize-py runs the module at build time and keeps only what was
imported then.
"""

from . import fs, http
from .errors import Denied, ErrorCode, Failed, InvalidArguments, NotFound, ToolError
from .guest import export
from .skill import Example, Skill

#: The version of the WIT contract (``agent-reach:skill``) this SDK builds against.
CONTRACT_VERSION = "0.1.0"
#: The version of this SDK.
__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "Denied",
    "ErrorCode",
    "Example",
    "Failed",
    "InvalidArguments",
    "NotFound",
    "Skill",
    "ToolError",
    "export",
    "fs",
    "http",
]
