"""Schemas derived from type hints, and the decoding that goes with them."""

import dataclasses
import enum
import unittest
from typing import Annotated, Any, Dict, List, Literal, Optional, TypedDict, Union

import support  # noqa: F401 - installs the binding stand-ins first
from agent_reach.schema import ArgumentError, compile_type


def schema(hint):
    return compile_type(hint, "t").schema


def decode(hint, value):
    return compile_type(hint, "t").decode(value, "x")


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Condition:
    """One condition on a row.

    Attributes:
        column: The column to test.
        op: How to compare.
    """

    column: str
    op: Literal["=", "<"] = "="
    value: Annotated[Optional[float], "What to compare with."] = None
    tags: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Query:
    where: List[Condition]


class Movie(TypedDict, total=False):
    title: str
    year: int


class Required(TypedDict):
    title: str


@dataclasses.dataclass
class Loop:
    next: Optional["Loop"] = None


class Primitives(unittest.TestCase):
    def test_each_json_kind_has_its_type(self):
        rows = [
            (str, {"type": "string"}),
            (int, {"type": "integer"}),
            (float, {"type": "number"}),
            (bool, {"type": "boolean"}),
            (Any, {}),
            (type(None), {"type": "null"}),
        ]
        for hint, expected in rows:
            self.assertEqual(schema(hint), expected, hint)

    def test_an_integral_float_is_an_integer_but_a_boolean_is_not(self):
        self.assertEqual(decode(int, 3.0), 3)
        self.assertIsInstance(decode(int, 3.0), int)
        for bad in (True, 3.5, "3"):
            with self.assertRaises(ArgumentError, msg=bad):
                decode(int, bad)

    def test_a_float_takes_integers_and_becomes_a_float(self):
        self.assertIsInstance(decode(float, 2), float)
        with self.assertRaises(ArgumentError):
            decode(float, False)

    def test_errors_name_the_path_and_what_was_given(self):
        with self.assertRaises(ArgumentError) as caught:
            decode(str, 12)
        self.assertEqual(caught.exception.path, "x")
        self.assertEqual(caught.exception.message, "expected a string, got an integer (12)")


class Containers(unittest.TestCase):
    def test_list_and_dict_describe_their_items(self):
        self.assertEqual(schema(list[int]), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(schema(List[str]), {"type": "array", "items": {"type": "string"}})
        self.assertEqual(schema(list), {"type": "array"})
        self.assertEqual(
            schema(dict[str, float]), {"type": "object", "additionalProperties": {"type": "number"}}
        )
        self.assertEqual(schema(Dict[str, Any]), {"type": "object"})

    def test_an_item_error_names_its_index_and_key(self):
        with self.assertRaises(ArgumentError) as caught:
            decode(list[int], [1, "two"])
        self.assertEqual(caught.exception.path, "x[1]")
        with self.assertRaises(ArgumentError) as caught:
            decode(dict[str, int], {"a": 1, "b": None})
        self.assertEqual(caught.exception.path, "x.b")

    def test_dict_keys_must_be_strings(self):
        with self.assertRaisesRegex(TypeError, "dict\\[str, X\\]"):
            schema(dict[int, str])


class Unions(unittest.TestCase):
    def test_optional_adds_null_to_the_type(self):
        for hint in (Optional[str], str | None, Union[str, None]):
            self.assertEqual(schema(hint), {"type": ["string", "null"]}, hint)
            self.assertIsNone(decode(hint, None))
            self.assertEqual(decode(hint, "a"), "a")

    def test_optional_of_an_enum_keeps_the_enum_and_allows_null(self):
        # {"type": ["string", "null"], "enum": [...]} would refuse null.
        self.assertEqual(
            schema(Optional[Literal["a", "b"]]),
            {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        )

    def test_plain_unions_merge_their_types_and_decode_in_order(self):
        hint = Union[str, float, bool, None]
        self.assertEqual(schema(hint), {"type": ["string", "number", "boolean", "null"]})
        self.assertIs(decode(hint, True), True)
        self.assertEqual(decode(hint, 2), 2.0)
        self.assertEqual(decode(hint, "2"), "2")
        with self.assertRaisesRegex(ArgumentError, "expected a string.*or expected a number"):
            decode(hint, [1])

    def test_richer_unions_become_any_of_beside_the_plain_kinds(self):
        self.assertEqual(
            schema(Union[int, list[int]]),
            {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
        )
        # null is accepted once, however the union is spelled.
        self.assertEqual(
            schema(Optional[Union[str, float, list[str]]]),
            {"anyOf": [{"type": ["string", "number", "null"]}, {"type": "array", "items": {"type": "string"}}]},
        )
        self.assertEqual(decode(Optional[Union[str, float, list[str]]], ["a"]), ["a"])


class Enums(unittest.TestCase):
    def test_literal_is_an_enum_of_its_values(self):
        self.assertEqual(schema(Literal["asc", "desc"]), {"type": "string", "enum": ["asc", "desc"]})
        self.assertEqual(schema(Literal[1, "a"]), {"enum": [1, "a"]})
        self.assertEqual(decode(Literal["asc", "desc"], "desc"), "desc")
        with self.assertRaisesRegex(ArgumentError, 'expected one of "asc", "desc", got a string \\("up"\\)'):
            decode(Literal["asc", "desc"], "up")

    def test_literal_true_is_not_the_number_one(self):
        with self.assertRaises(ArgumentError):
            decode(Literal[1, 2], True)

    def test_an_enum_class_decodes_to_its_member(self):
        self.assertEqual(
            schema(Color), {"type": "string", "enum": ["red", "green"], "description": "A colour."}
        )
        self.assertIs(decode(Color, "green"), Color.GREEN)


class Annotations(unittest.TestCase):
    def test_strings_describe_and_dicts_add_keywords(self):
        hint = Annotated[int, "How many rows.", {"minimum": 1, "maximum": 200}]
        self.assertEqual(
            schema(hint),
            {"type": "integer", "description": "How many rows.", "minimum": 1, "maximum": 200},
        )

    def test_a_description_outside_optional_describes_the_whole(self):
        self.assertEqual(
            schema(Annotated[Optional[Literal["a"]], "Pick one."]),
            {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}], "description": "Pick one."},
        )


class Objects(unittest.TestCase):
    def test_a_dataclass_is_an_object_with_no_other_keys(self):
        got = schema(Condition)
        self.assertEqual(got["type"], "object")
        self.assertEqual(got["description"], "One condition on a row.")
        self.assertEqual(got["required"], ["column"])
        self.assertIs(got["additionalProperties"], False)
        self.assertEqual(
            got["properties"],
            {
                "column": {"type": "string", "description": "The column to test."},
                "op": {"type": "string", "enum": ["=", "<"], "default": "=", "description": "How to compare."},
                "value": {"type": ["number", "null"], "description": "What to compare with."},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        )

    def test_a_dataclass_decodes_into_an_instance_with_defaults(self):
        got = decode(Query, {"where": [{"column": "price", "op": "<", "value": 3}]})
        self.assertEqual(got, Query([Condition("price", "<", 3.0, [])]))
        self.assertIsInstance(got.where[0].value, float)

    def test_a_dataclass_refuses_unknown_and_missing_keys_by_path(self):
        with self.assertRaises(ArgumentError) as caught:
            decode(Query, {"where": [{"column": "a", "operator": "="}]})
        self.assertEqual(caught.exception.path, "x.where[0]")
        self.assertEqual(
            caught.exception.message, "unknown key `operator`; Condition takes only: column, op, value, tags"
        )
        with self.assertRaisesRegex(ArgumentError, "missing required key `column`"):
            decode(Query, {"where": [{}]})

    def test_a_dataclass_without_a_docstring_has_no_description(self):
        @dataclasses.dataclass
        class Point:
            x: int

        self.assertNotIn("description", schema(Point))

    def test_typeddict_keys_follow_total(self):
        movie = schema(Movie)
        self.assertNotIn("required", movie)
        self.assertEqual(schema(Required)["required"], ["title"])
        # An optional key that was not given stays out of the dict.
        self.assertEqual(decode(Movie, {"title": "Heat"}), {"title": "Heat"})

    def test_recursive_types_are_refused_when_defined(self):
        with self.assertRaisesRegex(TypeError, "contains itself"):
            schema(Loop)

    def test_types_without_a_json_form_are_refused_naming_where(self):
        with self.assertRaisesRegex(TypeError, "^t: the type .*bytes.* has no JSON Schema form"):
            schema(bytes)
        with self.assertRaisesRegex(TypeError, "^t\\[\\]: "):
            schema(list[complex])


if __name__ == "__main__":
    unittest.main()
