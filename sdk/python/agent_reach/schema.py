"""JSON Schemas from type hints, and the decoders that go with them.

Each annotation is compiled once, when the skill is defined (at build time:
componentize-py runs the module then and snapshots the result), into a
:class:`Compiled`: the JSON Schema (draft 2020-12) the model sees, and a
decoder that turns the JSON value of a call into the Python value the tool
is written for (a dataclass instance, an ``Enum`` member, a ``float`` for a
JSON ``3``). Keeping both in one place is what stops the schema and the
decoding from drifting apart.

Understood: ``str``, ``int``, ``float``, ``bool``, ``list[X]``,
``dict[str, X]``, ``Optional[X]`` / ``X | None``, other unions, ``Literal[…]``,
``Enum`` subclasses, ``Any``, dataclasses and ``TypedDict`` (nested objects,
no extra keys), and ``Annotated[X, "description", {"minimum": 1}]``: strings
describe, dicts add JSON Schema keywords. Anything else is refused when the
skill is defined, naming the parameter.

The host validates every call against the schema before the skill runs; the
decoders still check types, so that a skill tested outside the host (a plain
``skill.call(...)``) sees the same errors, naming the JSON path.
"""

import dataclasses
import enum
import types
import typing

from . import docstrings

#: The JSON Schema dialect of every schema; the host's validator reads it.
DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The "default" of a parameter or field that a call must give.
REQUIRED = object()
_MISSING = REQUIRED


class ArgumentError(Exception):
    """A value does not fit its type: where (``where[0].op``) and why."""

    def __init__(self, path, message):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class Compiled:
    """A type's schema and the decoder of its values."""

    __slots__ = ("schema", "decode")

    def __init__(self, schema, decode):
        #: The JSON Schema, a dict.
        self.schema = schema
        #: ``decode(value, path) -> value``; raises :class:`ArgumentError`.
        self.decode = decode


def _json_kind(value):
    """How a JSON value is named in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(value, limit=60):
    """A value for a message, cut to a readable length."""
    text = '"' + value + '"' if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _got(value):
    if isinstance(value, (dict, list)):
        return _json_kind(value)
    return f"{_json_kind(value)} ({_shown(value)})"


def _join_path(path, key):
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def compile_type(annotation, where, _seen=()):
    """Compile ``annotation`` (found at ``where``, for messages) into a
    :class:`Compiled`. Raises ``TypeError`` for what has no JSON form."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)

    if origin is typing.Annotated:
        inner = compile_type(args[0], where, _seen)
        extra = {}
        notes = []
        for meta in annotation.__metadata__:
            if isinstance(meta, str):
                notes.append(meta)
            elif isinstance(meta, dict):
                extra.update(meta)
            # Other metadata belongs to other tools (validators, ORMs): ignored.
        schema = dict(inner.schema)
        schema.update(extra)
        if notes:
            schema["description"] = " ".join(notes)
        return Compiled(schema, inner.decode)

    if annotation is typing.Any or annotation is object:
        return Compiled({}, lambda value, path: value)
    if annotation is str:
        return Compiled({"type": "string"}, _decode_str)
    if annotation is bool:
        return Compiled({"type": "boolean"}, _decode_bool)
    if annotation is int:
        return Compiled({"type": "integer"}, _decode_int)
    if annotation is float:
        return Compiled({"type": "number"}, _decode_float)
    if annotation is type(None):
        return Compiled({"type": "null"}, _decode_null)

    if origin is typing.Union or origin is types.UnionType:
        return _compile_union(args, where, _seen)
    if origin is typing.Literal:
        return _compile_literal(args, where)
    if annotation is list or origin in (list, typing.List):
        return _compile_list(args, where, _seen)
    if annotation is dict or origin in (dict, typing.Dict):
        return _compile_dict(args, where, _seen)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _compile_enum(annotation, where)
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return _compile_dataclass(annotation, where, _seen)
    if typing.is_typeddict(annotation):
        return _compile_typeddict(annotation, where, _seen)
    raise TypeError(
        f"{where}: the type {annotation!r} has no JSON Schema form; use str, int, float, bool, "
        "list[X], dict[str, X], Optional[X], Literal[...], an Enum, a dataclass or a TypedDict"
    )


def _decode_str(value, path):
    if not isinstance(value, str):
        raise ArgumentError(path, f"expected a string, got {_got(value)}")
    return value


def _decode_bool(value, path):
    if not isinstance(value, bool):
        raise ArgumentError(path, f"expected true or false, got {_got(value)}")
    return value


def _decode_int(value, path):
    # JSON has one number type: 3.0 is an integer to JSON Schema, so it is here.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(path, f"expected an integer, got {_got(value)}")
    return value


def _decode_float(value, path):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(path, f"expected a number, got {_got(value)}")
    return float(value)


def _decode_null(value, path):
    if value is not None:
        raise ArgumentError(path, f"expected null, got {_got(value)}")
    return None


#: Keywords that constrain every instance, null included: a nullable schema
#: with one of these cannot just add "null" to its "type".
_RESTRICTS_ALL = {"enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref"}


def _accepts_null(schema):
    kinds = schema.get("type")
    return kinds == "null" or (isinstance(kinds, list) and "null" in kinds)


def nullable(schema):
    """``schema`` that also accepts ``null``, in the plainest form."""
    if "type" in schema and not (_RESTRICTS_ALL & schema.keys()):
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if "null" in kinds:
            return schema
        out = dict(schema)
        out["type"] = kinds + ["null"]
        return out
    if schema == {} or any(_accepts_null(b) for b in schema.get("anyOf", ())):
        return schema
    if "anyOf" in schema and set(schema) <= {"anyOf", "description"}:
        return {**schema, "anyOf": schema["anyOf"] + [{"type": "null"}]}
    out = {"anyOf": [schema, {"type": "null"}]}
    # Describe the whole, not one branch, so the model reads it first.
    if "description" in schema:
        inner = dict(schema)
        out["description"] = inner.pop("description")
        out["anyOf"] = [inner, {"type": "null"}]
    return out


def _compile_union(args, where, seen):
    members = [a for a in args if a is not type(None)]
    has_none = len(members) < len(args)
    compiled = [compile_type(a, where, seen) for a in members]
    if len(compiled) == 1:
        only = compiled[0]
        schema = nullable(only.schema) if has_none else only.schema

        def decode_optional(value, path):
            if value is None and has_none:
                return None
            return only.decode(value, path)

        return Compiled(schema, decode_optional)

    # Plain kinds merge into one "type" list (what a model reads most easily);
    # richer members stay beside it in "anyOf".
    def is_plain(c):
        return set(c.schema) == {"type"} and isinstance(c.schema["type"], str)

    kinds = [c.schema["type"] for c in compiled if is_plain(c)] + (["null"] if has_none else [])
    rich = [c.schema for c in compiled if not is_plain(c)]
    merged = [{"type": kinds if len(kinds) > 1 else kinds[0]}] if kinds else []
    schema = merged[0] if not rich else {"anyOf": merged + rich}
    # bool before int: True is an int to Python, not to JSON.
    order = sorted(range(len(compiled)), key=lambda i: members[i] is not bool)

    def decode_union(value, path):
        if value is None and has_none:
            return None
        problems = []
        for i in order:
            try:
                return compiled[i].decode(value, path)
            except ArgumentError as err:
                problems.append(err.message)
        raise ArgumentError(path, "; or ".join(dict.fromkeys(problems)))

    return Compiled(schema, decode_union)


def _compile_literal(values, where):
    for v in values:
        if v is not None and not isinstance(v, (str, int, float, bool)):
            raise TypeError(f"{where}: Literal values must be strings, numbers, booleans or None")
    schema = {"enum": list(values)}
    kinds = {_schema_kind(v) for v in values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), "enum": list(values)}
    allowed = ", ".join(_shown(v) if v is not None else "null" for v in values)

    def decode_literal(value, path):
        for v in values:
            # 1 == True in Python; in JSON they differ, so compare kinds too.
            if value == v and isinstance(value, bool) == isinstance(v, bool):
                return v
        raise ArgumentError(path, f"expected one of {allowed}, got {_got(value)}")

    return Compiled(schema, decode_literal)


def _schema_kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _compile_enum(cls, where):
    members = list(cls)
    literal = _compile_literal(tuple(m.value for m in members), where)
    by_value = {(m.value, isinstance(m.value, bool)): m for m in members}
    schema = dict(literal.schema)
    doc = _own_doc(cls)
    if doc:
        schema["description"] = doc

    def decode_enum(value, path):
        v = literal.decode(value, path)
        return by_value[(v, isinstance(v, bool))]

    return Compiled(schema, decode_enum)


def _compile_list(args, where, seen):
    item = compile_type(args[0], f"{where}[]", seen) if args else compile_type(typing.Any, where)
    schema = {"type": "array"}
    if item.schema:
        schema["items"] = item.schema

    def decode_list(value, path):
        if not isinstance(value, list):
            raise ArgumentError(path, f"expected an array, got {_got(value)}")
        return [item.decode(v, _join_path(path, i)) for i, v in enumerate(value)]

    return Compiled(schema, decode_list)


def _compile_dict(args, where, seen):
    if args and args[0] is not str:
        raise TypeError(f"{where}: JSON object keys are strings; use dict[str, X]")
    value_type = compile_type(args[1], f"{where}{{}}", seen) if args else compile_type(typing.Any, where)
    schema = {"type": "object"}
    if value_type.schema:
        schema["additionalProperties"] = value_type.schema

    def decode_dict(value, path):
        if not isinstance(value, dict):
            raise ArgumentError(path, f"expected an object, got {_got(value)}")
        return {k: value_type.decode(v, _join_path(path, k)) for k, v in value.items()}

    return Compiled(schema, decode_dict)


def _own_doc(cls):
    """A class's docstring without its ``Attributes:`` section, or ``""``.

    Dataclasses without a docstring get one made from their signature
    (``Point(x: int, y: int)``), which says nothing to a model.
    """
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(cls.__name__ + "("):
        return ""
    return docstrings.parse(doc)[0]


class Field:
    """One key of an object: its name, compiled type and default."""

    __slots__ = ("name", "compiled", "default", "factory")

    def __init__(self, name, compiled, default=_MISSING, factory=None):
        self.name = name
        self.compiled = compiled
        #: The value of a missing key; ``_MISSING`` when the key is required.
        self.default = default
        #: Makes the value of a missing key (a dataclass ``default_factory``).
        self.factory = factory

    @property
    def required(self):
        """Whether a call must give this key."""
        return self.default is _MISSING and self.factory is None


def field_schema(compiled, default, description):
    """The schema of one object key: its type's schema with the default
    and a description (unless the type's own ``Annotated`` gave one)."""
    schema = dict(compiled.schema)
    if default is None:
        # `x: int = None` means "an int, or nothing": null must validate.
        schema = nullable(schema)
    elif default is not _MISSING and _json_safe(default):
        schema["default"] = default.value if isinstance(default, enum.Enum) else default
    if description and "description" not in schema:
        schema["description"] = description
    return schema


def _json_safe(value):
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    return False


def object_schema(fields, descriptions, doc=""):
    """The schema of an object with these :class:`Field` s: no other keys."""
    properties = {}
    required = []
    for f in fields:
        properties[f.name] = field_schema(f.compiled, f.default, descriptions.get(f.name))
        if f.required:
            required.append(f.name)
    schema = {"type": "object"}
    if doc:
        schema["description"] = doc
    schema["properties"] = properties
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def decode_object(fields, value, path, what):
    """Check an object against its fields and decode each value.

    Returns ``{name: value}`` with defaults filled in. Unknown and missing
    keys are errors that list the keys ``what`` (a tool, a type) takes.
    """
    if not isinstance(value, dict):
        raise ArgumentError(path, f"expected an object, got {_got(value)}")
    names = [f.name for f in fields]
    unknown = [k for k in value if k not in names]
    if unknown:
        keys = ", ".join(f"`{k}`" for k in unknown)
        raise ArgumentError(
            path,
            f"unknown key{'s' if len(unknown) > 1 else ''} {keys}; {what} takes only: "
            + ", ".join(names),
        )
    out = {}
    for f in fields:
        if f.name in value:
            out[f.name] = f.compiled.decode(value[f.name], _join_path(path, f.name))
        elif f.factory is not None:
            out[f.name] = f.factory()
        elif f.default is _MISSING:
            raise ArgumentError(path, f"missing required key `{f.name}`")
        elif isinstance(f.default, (list, dict)):
            # A fresh copy: `where: list = []` must not carry one call's changes into the next.
            out[f.name] = type(f.default)(f.default)
        else:
            out[f.name] = f.default
    return out


def _class_fields(cls, where, seen, hints, defaults, factories=None):
    """Fields of a dataclass or TypedDict, with their docstring descriptions."""
    if cls in seen:
        raise TypeError(f"{where}: {cls.__name__} contains itself; recursive types are not supported")
    descriptions = docstrings.parse(cls.__dict__.get("__doc__") or "")[1]
    fields = []
    for name, hint in hints.items():
        compiled = compile_type(hint, f"{where}.{name}", seen + (cls,))
        factory = (factories or {}).get(name)
        fields.append(Field(name, compiled, defaults.get(name, _MISSING), factory))
    return fields, descriptions


def _compile_dataclass(cls, where, seen):
    hints = typing.get_type_hints(cls, include_extras=True)
    defaults = {}
    factories = {}
    init_fields = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        init_fields.append(f.name)
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            factories[f.name] = f.default_factory
    hints = {n: hints[n] for n in init_fields}
    fields, descriptions = _class_fields(cls, where, seen, hints, defaults, factories)
    for f in dataclasses.fields(cls):
        text = f.metadata.get("description") if f.metadata else None
        if text:
            descriptions[f.name] = text
    schema = object_schema(fields, descriptions, _own_doc(cls))

    def decode_dataclass(value, path):
        return cls(**decode_object(fields, value, path, cls.__name__))

    return Compiled(schema, decode_dataclass)


def _compile_typeddict(cls, where, seen):
    hints = typing.get_type_hints(cls, include_extras=True)
    required = getattr(cls, "__required_keys__", frozenset(hints))
    # An optional key has no default: it is left out, not filled in.
    defaults = {name: _ABSENT for name in hints if name not in required}
    fields, descriptions = _class_fields(cls, where, seen, hints, defaults)
    schema = object_schema(fields, descriptions, _own_doc(cls))
    for name in defaults:
        schema["properties"][name].pop("default", None)

    def decode_typeddict(value, path):
        out = decode_object(fields, value, path, cls.__name__)
        return {k: v for k, v in out.items() if v is not _ABSENT}

    return Compiled(schema, decode_typeddict)


class _Absent:
    """The 'default' of an optional TypedDict key: the key stays out."""

    def __repr__(self):
        return "<absent>"


_ABSENT = _Absent()
