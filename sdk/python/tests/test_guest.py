"""The `Guest` class componentize-py calls: WIT records in, WIT errors out."""

import json
import unittest

import support
from agent_reach import Denied, InvalidArguments, Skill, export


def make_guest():
    skill = Skill("hello", "0.1.0", "Greets people.")

    @skill.tool(examples=[{"description": "Greet Ada", "arguments": {"name": "Ada"}, "output": "Hello, Ada!"}])
    def greet(name: str) -> str:
        """Say hello."""
        if name == "root":
            raise Denied("not root")
        if name == "":
            raise InvalidArguments("give a name")
        if name == "boom":
            raise ValueError("bad value")
        return f"Hello, {name}!"

    return skill, export(skill)()


class Guest(unittest.TestCase):
    def test_describe_answers_wit_records_with_json_text(self):
        _, guest = make_guest()
        m = guest.describe()
        self.assertIsInstance(m, support.Manifest)
        self.assertIn(support.Guest, type(guest).__mro__)
        (tool,) = m.tools
        self.assertEqual((m.name, m.version, m.instructions), ("hello", "0.1.0", None))
        self.assertEqual(json.loads(tool.parameters)["required"], ["name"])
        (example,) = tool.examples
        self.assertEqual((json.loads(example.arguments), example.output), ({"name": "Ada"}, "Hello, Ada!"))

    def test_call_answers_text_or_raises_the_wit_error(self):
        _, guest = make_guest()
        self.assertEqual(guest.call("greet", '{"name": "Ada"}'), "Hello, Ada!")
        rows = [
            ('{"name": "root"}', support.ErrorCode.DENIED, "not root"),
            ('{"name": ""}', support.ErrorCode.INVALID_ARGUMENTS, "give a name"),
            ('{"name": "boom"}', support.ErrorCode.FAILED, "greet: ValueError: bad value"),
            ('{"who": "x"}', support.ErrorCode.INVALID_ARGUMENTS, "greet: invalid arguments: unknown key `who`; greet takes only: name"),
            ("{}", support.ErrorCode.INVALID_ARGUMENTS, "greet: invalid arguments: missing required key `name`"),
        ]
        for arguments, code, message in rows:
            with self.assertRaises(support.Err) as caught:
                guest.call("greet", arguments)
            self.assertEqual(caught.exception.value, support.ToolError(code, message), arguments)
        with self.assertRaises(support.Err) as caught:
            guest.call("wave", "{}")
        self.assertEqual(caught.exception.value.code, support.ErrorCode.NOT_FOUND)

    def test_a_bug_in_the_sdk_still_does_not_trap(self):
        skill, guest = make_guest()
        skill.call = lambda tool, arguments: 1 / 0
        with self.assertRaises(support.Err) as caught:
            guest.call("greet", "{}")
        self.assertEqual(
            caught.exception.value,
            support.ToolError(support.ErrorCode.FAILED, "greet: internal error in agent_reach: ZeroDivisionError: division by zero"),
        )


if __name__ == "__main__":
    unittest.main()
