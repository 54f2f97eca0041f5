"""The one module that imports the componentize-py bindings (``wit_world``).

Inside a component these are the generated bindings of the world in
``wit/skill.wit``. In a plain interpreter (unit tests, an author trying a
tool) they do not exist, and every name here is ``None``: the SDK then works
without the sandbox (``fs`` uses the process's working directory and has no
grants; ``http`` refuses to run).

Imported at the top, never inside a function: componentize-py runs the
module when it builds the component and keeps only what was imported then,
so an import first reached during a call fails with ``ModuleNotFoundError``.
"""

try:
    from componentize_py_types import Err, Ok
    from wit_world import exports
    from wit_world.exports import guest
except ImportError:  # not inside a component
    Err = Ok = exports = guest = None

try:
    from wit_world.imports import environment, preopens
    from wit_world.imports import wasi_filesystem_types as filesystem
except ImportError:
    environment = preopens = filesystem = None

try:
    from wit_world.imports import outgoing_handler, streams
    from wit_world.imports import wasi_http_types as http_types
except ImportError:
    outgoing_handler = streams = http_types = None

#: Whether the bindings are there, i.e. this runs inside a component.
IN_COMPONENT = guest is not None
