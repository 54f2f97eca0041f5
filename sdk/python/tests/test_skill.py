"""Defining tools and calling them: manifest, argument decoding, errors, results."""

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Annotated, Literal, Optional

import support
from agent_reach import Denied, ErrorCode, Example, Failed, InvalidArguments, NotFound, Skill, ToolError


@dataclasses.dataclass
class Condition:
    column: str
    op: Literal["=", ">"] = "="
    value: Optional[float] = None


def make_skill():
    skill = Skill("tables", "1.2.0", "Questions over tables.", instructions="# Use\nAsk.")

    @skill.tool(
        examples=[Example("Rows over 10", {"path": "a.csv", "where": [{"column": "x", "op": ">", "value": 10}]})]
    )
    def query(
        path: Annotated[str, "The file."],
        where: list[Condition] = (),
        limit: int = 20,
    ) -> dict:
        """Rows that match every condition.

        Args:
            where: Conditions, all of which must hold.
            limit: Most rows to return.
        """
        return {"path": path, "where": [dataclasses.asdict(c) for c in where], "limit": limit}

    @skill.tool(name="fail", description="Fails in the way it is asked to.")
    def fail_(how: str) -> str:
        if how == "tool":
            raise NotFound("no such table; tables: a, b")
        if how == "key":
            return {}["region"]
        if how == "recursion":
            return fail_(how)
        if how == "exit":
            sys.exit(3)
        if how == "open":
            open(os.path.join(support.SANDBOX.folders[0][0], "missing.csv"))
        if how == "encode":
            return {"x": object()}
        if how == "none":
            return None
        return Condition("a")

    return skill


class Manifest(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()

    def test_the_manifest_holds_what_the_host_checks(self):
        m = make_skill().manifest()
        self.assertEqual((m["name"], m["version"], m["instructions"]), ("tables", "1.2.0", "# Use\nAsk."))
        query, fail = m["tools"]
        self.assertEqual(query["name"], "query")
        self.assertEqual(query["description"], "Rows that match every condition.")
        params = query["parameters"]
        self.assertEqual(params["$schema"], "https://json-schema.org/draft/2020-12/schema")
        self.assertEqual(params["required"], ["path"])
        self.assertIs(params["additionalProperties"], False)
        self.assertEqual(params["properties"]["path"]["description"], "The file.")
        self.assertEqual(params["properties"]["limit"], {"type": "integer", "default": 20, "description": "Most rows to return."})
        self.assertEqual(params["properties"]["where"]["items"]["required"], ["column"])
        self.assertEqual(query["examples"][0]["arguments"]["path"], "a.csv")
        self.assertEqual(fail["name"], "fail")
        self.assertEqual(fail["description"], "Fails in the way it is asked to.")

    def test_mistakes_stop_the_definition_with_a_message_naming_the_tool(self):
        skill = Skill("s", "0.1.0", "d")
        for name in ("Bad-Name", "2fast", "a.b"):
            with self.assertRaisesRegex(ValueError, f"s: tool name '{name}' is invalid"):
                skill.tool(name=name)(lambda x: None)

        def untyped(x):
            """Doc."""

        with self.assertRaisesRegex(TypeError, r"s\.untyped\(x\): annotate the parameter"):
            skill.tool(untyped)

        def nodoc(x: int):
            pass

        with self.assertRaisesRegex(ValueError, "s.nodoc: a tool needs a description"):
            skill.tool(nodoc)

        def typo(path: str):
            """Read.

            Args:
                pth: The file.
            """

        with self.assertRaisesRegex(ValueError, "documents pth, which is not a parameter"):
            skill.tool(typo)

        def ok(n: int):
            """Count."""

        with self.assertRaisesRegex(ValueError, "example 'two' does not fit the parameters: n: expected an integer"):
            skill.tool(examples=[{"description": "two", "arguments": {"n": "2"}}])(ok)
        skill.tool(ok)
        with self.assertRaisesRegex(ValueError, "tool ok is defined twice"):
            skill.tool(ok)

    def test_skill_names_and_versions_follow_the_hosts_rules(self):
        with self.assertRaisesRegex(ValueError, "skill name 'My Skill' is invalid"):
            Skill("My Skill", "0.1.0", "d")
        with self.assertRaisesRegex(ValueError, "not semver"):
            Skill("s", "1.0", "d")
        Skill("web-fetch_2", "0.1.0-beta.1+build.5", "d")


class Calls(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()
        self.skill = make_skill()

    def call(self, tool, arguments):
        return self.skill.call(tool, json.dumps(arguments))

    def error(self, tool, arguments):
        with self.assertRaises(ToolError) as caught:
            self.skill.call(tool, json.dumps(arguments) if not isinstance(arguments, str) else arguments)
        return caught.exception

    def test_arguments_arrive_decoded_with_defaults(self):
        got = json.loads(self.call("query", {"path": "a.csv", "where": [{"column": "x", "op": ">", "value": 3}]}))
        self.assertEqual(got, {"path": "a.csv", "where": [{"column": "x", "op": ">", "value": 3.0}], "limit": 20})

    def test_bad_arguments_are_invalid_arguments_naming_the_path(self):
        err = self.error("query", {"path": "a.csv", "where": [{"column": "x", "op": "=="}]})
        self.assertEqual(err.code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(
            err.message,
            'query: invalid arguments at `where[0].op`: expected one of "=", ">", got a string ("==")',
        )
        err = self.error("query", {"pth": "a.csv"})
        self.assertEqual(err.message, "query: invalid arguments: unknown key `pth`; query takes only: path, where, limit")
        self.assertIsInstance(self.error("query", "{not json"), InvalidArguments)

    def test_an_unknown_tool_lists_the_tools(self):
        err = self.error("qurey", {})
        self.assertEqual(err.code, ErrorCode.NOT_FOUND)
        self.assertEqual(err.message, "tables: no tool named `qurey`; this skill has: query, fail")

    def test_a_tool_error_passes_through(self):
        err = self.error("fail", {"how": "tool"})
        self.assertEqual((err.code, err.message), (ErrorCode.NOT_FOUND, "no such table; tables: a, b"))

    def test_other_exceptions_become_failed_with_their_message_and_no_traceback(self):
        rows = [
            ("key", "fail: KeyError: 'region'"),
            ("recursion", "fail: recursion went too deep (RecursionError)"),
            ("exit", "fail: SystemExit: 3"),
            ("encode", "fail: could not encode the result as JSON: object is not JSON serialisable"),
        ]
        for how, message in rows:
            err = self.error("fail", {"how": how})
            self.assertEqual((err.code, err.message), (ErrorCode.FAILED, message), how)
            self.assertIsInstance(err, Failed)

    def test_an_unguarded_open_says_what_exists(self):
        with tempfile.TemporaryDirectory() as folder:
            open(os.path.join(folder, "orders.csv"), "w").close()
            support.SANDBOX.folders = [(folder, False)]
            err = self.error("fail", {"how": "open"})
        self.assertEqual(err.code, ErrorCode.NOT_FOUND)
        self.assertTrue(err.message.startswith(f"fail: {folder}/missing.csv: no such file or folder. {folder}/ has: orders.csv"), err.message)

    def test_results_are_text_or_compact_json(self):
        self.assertEqual(self.call("fail", {"how": "dataclass"}), '{"column":"a","op":"=","value":null}')
        self.assertEqual(self.call("fail", {"how": "none"}), "null")


class Native(unittest.TestCase):
    def test_a_skill_runs_in_a_plain_interpreter_without_bindings(self):
        # A fresh interpreter without the stand-ins: what an author's own tests see.
        code = (
            "import json, agent_reach as ar\n"
            "s = ar.Skill('hello', '0.1.0', 'Greets.')\n"
            "@s.tool\n"
            "def greet(name: str) -> str:\n"
            "    '''Greet.'''\n"
            "    return f'Hello, {name}!'\n"
            "Guest = ar.export(s)\n"
            "print(Guest().call('greet', json.dumps({'name': 'Ada'})))\n"
            "print(ar.fs.grants(), ar.fs.resolve('a/../b') == ar.fs.resolve('b'))\n"
            "try:\n"
            "    ar.http.get('https://example.com/')\n"
            "except ar.Failed as e:\n"
            "    print(type(e).__name__)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=support.SDK, capture_output=True, text=True, check=True
        ).stdout
        self.assertEqual(out, "Hello, Ada!\n[] True\nFailed\n")


if __name__ == "__main__":
    unittest.main()
