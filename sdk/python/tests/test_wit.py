"""The WIT a Python skill builds against carries the contract unchanged."""

import re
import unittest

import support


def body_of_nested(text, package):
    """The lines inside `package NAME { … }`, unindented."""
    start = text.index(f"package {package} {{\n") + len(f"package {package} {{\n")
    end = text.index("\n}\n", start)
    return "\n".join(line[4:] if line.startswith("    ") else line for line in text[start:end].splitlines())


class Contract(unittest.TestCase):
    def test_the_nested_contract_is_the_repositorys_skill_wit(self):
        original = support.REPO / "wit" / "skill.wit"
        if not original.is_file():
            self.skipTest("not inside the Agent Reach repository")
        ours = (support.SDK / "wit" / "skill.wit").read_text()
        head, _, body = original.read_text().partition("package agent-reach:skill@0.1.0;\n")
        self.assertEqual(body_of_nested(ours, "agent-reach:skill@0.1.0").strip("\n"), body.strip("\n"))
        # The package's doc comment travels with it.
        self.assertIn(head + "package agent-reach:skill@0.1.0 {", ours)

    def test_the_world_imports_what_the_sdk_calls_and_the_contract_version_matches(self):
        import agent_reach

        ours = (support.SDK / "wit" / "skill.wit").read_text()
        world = ours[ours.index("world skill {"):]
        world = world[: world.index("}")]
        imports = re.findall(r"import ([\w:/.@-]+);", world)
        self.assertEqual(imports, ["wasi:http/outgoing-handler@0.2.12", "wasi:filesystem/preopens@0.2.12", "wasi:cli/environment@0.2.12"])
        self.assertIn(f"include agent-reach:skill/skill@{agent_reach.CONTRACT_VERSION};", world)


if __name__ == "__main__":
    unittest.main()
