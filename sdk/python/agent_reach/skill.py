"""A skill: its manifest and its tools, each tool's schema derived from the
function that implements it, so the schema and the decoding cannot drift.

Everything here is plain Python: a skill can be defined and called in an
ordinary interpreter (``skill.call("greet", '{"name": "Ada"}')``), which is
how its tests run. :func:`agent_reach.export` connects it to the component.
"""

import dataclasses
import datetime
import decimal
import enum
import inspect
import json
import re
import typing

from . import docstrings, fs
from .errors import Failed, InvalidArguments, NotFound, ToolError
from .schema import (
    DIALECT,
    REQUIRED,
    ArgumentError,
    Field,
    compile_type,
    decode_object,
    object_schema,
)

#: ``[a-z][a-z0-9_-]*``, the host's rule for skill names (at most 64 characters).
SKILL_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")
#: ``[a-z][a-z0-9_]*``, the host's rule for tool names (at most 64 characters).
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: Semantic versions as the host parses them (``1.2.0``, ``0.1.0-beta.1``).
SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?"
)


@dataclasses.dataclass(frozen=True)
class Example:
    """One example call of a tool, shown to the model.

    Attributes:
        description: What the example demonstrates, in a sentence.
        arguments: The arguments object.
        output: What the tool returns for them, when it helps to show it.
    """

    description: str
    arguments: dict
    output: typing.Optional[str] = None


class Tool:
    """One tool: name, description, parameters and the function behind it."""

    def __init__(self, skill, fn, name, description, examples):
        where = f"{skill}.{name}"
        doc_text, doc_params = docstrings.parse(fn.__doc__)
        #: The tool's name.
        self.name = name
        #: What the tool does and when to use it, for a model.
        self.description = (description or doc_text).strip()
        if not self.description:
            raise ValueError(
                f"{where}: a tool needs a description: give description=… or a docstring"
            )
        self._fn = fn
        self._fields = _parameters(fn, where)
        unknown = sorted(set(doc_params) - {f.name for f in self._fields})
        if unknown:
            raise ValueError(
                f"{where}: the docstring documents {', '.join(unknown)}, which "
                f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}"
            )
        #: The JSON Schema of the arguments object, as a dict.
        self.parameters = {"$schema": DIALECT, **object_schema(self._fields, doc_params)}
        #: Example calls, checked against the parameters now rather than by
        #: the host when it loads the skill.
        self.examples = [self._check_example(where, e) for e in examples]

    def _check_example(self, where, example):
        if isinstance(example, dict):
            unknown = set(example) - {"description", "arguments", "output"}
            if unknown:
                raise ValueError(
                    f"{where}: an example has unknown keys {sorted(unknown)}; "
                    "use description, arguments and output"
                )
            example = Example(**example)
        if not isinstance(example, Example):
            raise TypeError(f"{where}: examples are Example(...) or dicts, not {example!r}")
        try:
            decode_object(self._fields, example.arguments, "", self.name)
        except ArgumentError as err:
            raise ValueError(
                f"{where}: example {example.description!r} does not fit the parameters: {err}"
            ) from None
        return example

    def run(self, arguments):
        """Decode the JSON ``arguments``, call the function, encode its result.

        Raises :class:`ToolError` and nothing else.
        """
        try:
            values = json.loads(arguments)
        except ValueError as err:
            raise InvalidArguments(f"{self.name}: the arguments are not JSON: {err}") from None
        try:
            kwargs = decode_object(self._fields, values, "", self.name)
        except ArgumentError as err:
            at = f" at `{err.path}`" if err.path else ""
            raise InvalidArguments(f"{self.name}: invalid arguments{at}: {err.message}") from None
        try:
            result = self._fn(**kwargs)
        except ToolError:
            raise
        except OSError as err:
            # An `open()` the author did not guard: say what the sandbox grants.
            raise fs.os_error(err, self.name) from None
        except RecursionError:
            raise Failed(f"{self.name}: recursion went too deep (RecursionError)") from None
        except MemoryError:
            raise Failed(
                f"{self.name}: ran out of memory (the permission table's memory_mb for this skill); "
                "ask for less data in one call, or the operator to raise memory_mb"
            ) from None
        except BaseException as err:  # noqa: BLE001 - anything else must not trap the instance
            raise Failed(f"{self.name}: {_describe_exception(err)}") from None
        return encode_result(self.name, result)


def _describe_exception(err):
    """``KeyError: 'region'`` — the type says as much as the text."""
    text = str(err)
    name = type(err).__name__
    return f"{name}: {text}" if text else name


def _parameters(fn, where):
    """The fields of a tool's arguments object, from its signature."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as err:  # a forward reference that does not resolve
        raise TypeError(f"{where}: cannot read the type hints: {err}") from None
    fields = []
    for param in inspect.signature(fn).parameters.values():
        at = f"{where}({param.name})"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"{at}: parameters must be plain or keyword-only, not *args/**kwargs/positional-only")
        if param.name not in hints:
            raise TypeError(f"{at}: annotate the parameter with its type (e.g. `{param.name}: str`)")
        compiled = compile_type(hints[param.name], at)
        default = REQUIRED if param.default is param.empty else param.default
        fields.append(Field(param.name, compiled, default))
    return fields


def _encode_extra(value):
    """JSON for the values json does not know: dataclasses, enums, dates, sets."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def encode_result(tool, result):
    """A tool's return value as the text the model receives: a ``str`` as it
    is, anything else as compact JSON."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=_encode_extra)
    except (TypeError, ValueError) as err:
        raise Failed(f"{tool}: could not encode the result as JSON: {err}") from None


class Skill:
    """A named, versioned set of tools.

    ``name`` is ``[a-z][a-z0-9_-]*`` (the ``.wasm`` file is named after it);
    ``version`` is semver; ``description`` is one or two sentences for a
    model choosing among skills; ``instructions`` is long-form Markdown,
    shown only when a model asks for this skill.
    """

    def __init__(self, name, version, description, instructions=None):
        if not SKILL_NAME.fullmatch(name):
            raise ValueError(f"skill name {name!r} is invalid: use [a-z][a-z0-9_-]*, at most 64 characters")
        if not SEMVER.fullmatch(version):
            raise ValueError(f"version {version!r} of skill {name} is not semver (e.g. 1.2.0)")
        if not description.strip():
            raise ValueError(f"skill {name}: the description is empty")
        #: The skill's name.
        self.name = name
        #: Its version.
        self.version = version
        #: What it is for, for a model choosing among skills.
        self.description = description
        #: Long-form Markdown guidance, or ``None``.
        self.instructions = instructions
        #: Tools by name, in the order they were added.
        self.tools = {}

    def tool(self, fn=None, *, name=None, description=None, examples=()):
        """Add a function as a tool: ``@skill.tool`` or ``@skill.tool(...)``.

        The tool is named after the function unless ``name`` is given; its
        description is ``description`` or the function's docstring (without
        its ``Args:`` section, which describes the parameters). ``examples``
        are :class:`Example` s or dicts with ``description``, ``arguments``
        and optionally ``output``. Mistakes (a missing type hint, a type with
        no JSON form, an example that does not fit) raise here, so they stop
        the build rather than a call.
        """

        def add(fn):
            tool_name = name or fn.__name__
            if not TOOL_NAME.fullmatch(tool_name):
                raise ValueError(
                    f"{self.name}: tool name {tool_name!r} is invalid: use [a-z][a-z0-9_]*, "
                    "at most 64 characters (or pass name=…)"
                )
            if tool_name in self.tools:
                raise ValueError(f"{self.name}: tool {tool_name} is defined twice")
            self.tools[tool_name] = Tool(self.name, fn, tool_name, description, list(examples))
            return fn

        return add(fn) if fn is not None else add

    def manifest(self):
        """What ``describe`` answers, as plain data (schemas as dicts)."""
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "instructions": self.instructions,
            "tools": [
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "examples": [dataclasses.asdict(e) for e in t.examples],
                }
                for t in self.tools.values()
            ],
        }

    def call(self, tool, arguments):
        """Run ``tool`` with ``arguments`` (JSON text); returns the result text.

        Raises :class:`ToolError` and nothing else: any other exception the
        tool raises becomes a ``failed`` error with its message.
        """
        found = self.tools.get(tool)
        if found is None:
            raise NotFound(
                f"{self.name}: no tool named `{tool}`; this skill has: {', '.join(self.tools)}"
            )
        return found.run(arguments)
