"""Paths and grants: resolving, and errors that say what is granted or exists."""

import os
import tempfile
import unittest

import support
from agent_reach import ErrorCode, fs


def tree(root, names):
    for name in names:
        path = os.path.join(root, name)
        if name.endswith("/"):
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("x")


class Resolve(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()
        support.SANDBOX.cwd = "/home/ana/project"

    def test_relative_paths_are_relative_to_the_hosts_working_directory(self):
        rows = [
            ("data/a.csv", "/home/ana/project/data/a.csv"),
            ("./data/../b.csv", "/home/ana/project/b.csv"),
            ("/srv/x/./y/../z.json", "/srv/x/z.json"),
            ("../../../../etc/passwd", "/etc/passwd"),
            ("//srv//x", "/srv/x"),
            (".", "/home/ana/project"),
        ]
        for given, expected in rows:
            self.assertEqual(fs.resolve(given), expected, given)


class Grants(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()

    def test_grants_come_from_the_preopens_longest_first_with_writability(self):
        support.SANDBOX.folders = [("/srv/data", False), ("/srv/data/out", True), ("/tmp", False)]
        self.assertEqual(
            fs.grants(),
            [fs.Grant("/srv/data/out", True), fs.Grant("/srv/data", False), fs.Grant("/tmp", False)],
        )
        self.assertEqual(support.SANDBOX.open_resources, 0, "every descriptor is released")
        self.assertEqual(fs.describe_grants(), "readable: /srv/data, /tmp; writable: /srv/data/out")

    def test_a_grant_does_not_reach_a_neighbour_whose_name_it_prefixes(self):
        support.SANDBOX.folders = [("/srv/notes", True)]
        self.assertIsNone(fs.grant_for("/srv/notes-private/a.md"))
        self.assertEqual(fs.grant_for("/srv/notes/a.md"), fs.Grant("/srv/notes", True))
        self.assertEqual(fs.grant_for("/srv/notes"), fs.Grant("/srv/notes", True))

    def test_nothing_granted(self):
        self.assertEqual(fs.describe_grants(), "readable: none; writable: none")


class Errors(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        support.SANDBOX.folders = [(self.root, False)]

    def tearDown(self):
        self.dir.cleanup()

    def test_outside_every_grant_is_denied_with_the_grants_listed(self):
        err = fs.io_error(fs.READ, "/etc/passwd", PermissionError(76, "Capabilities insufficient"))
        self.assertEqual(err.code, ErrorCode.DENIED)
        self.assertEqual(err.message, f"read /etc/passwd is not granted (readable: {self.root}; writable: none)")

    def test_a_write_under_a_read_only_grant_is_denied(self):
        err = fs.io_error(fs.WRITE, f"{self.root}/a.txt", PermissionError(1, "Operation not permitted"))
        self.assertEqual(err.code, ErrorCode.DENIED)
        self.assertIn(f"{self.root} is read-only", err.message)

    def test_a_refusal_escaping_a_tool_under_a_read_only_grant_is_named_a_write(self):
        # Plain open(path, "w") in a tool: the SDK only sees the OSError.
        err = fs.os_error(PermissionError(1, "Operation not permitted", f"{self.root}/new.txt"), "save")
        self.assertEqual(err.code, ErrorCode.DENIED)
        self.assertIn(f"save: write to {self.root}/new.txt is not granted: {self.root} is read-only", err.message)

    def test_a_guessed_name_gets_the_folder_with_the_closest_name_first(self):
        tree(self.root, ["notes/todo.md", "notes/meeting_notes_2024-04-26.md", "notes/meeting_notes_2024-05-03.md", "notes/archive/"])
        with self.assertRaises(fs.NotFound) as caught:
            fs.open(f"{self.root}/notes/meeting-notes-2024-05-03.md")
        self.assertEqual(
            caught.exception.message,
            f"{self.root}/notes/meeting-notes-2024-05-03.md: no such file or folder. {self.root}/notes/ has: "
            "meeting_notes_2024-05-03.md, meeting_notes_2024-04-26.md, todo.md, archive/ — use one of "
            "these names, or list the folder",
        )

    def test_a_missing_folder_climbs_to_the_nearest_existing_one_inside_the_grant(self):
        tree(self.root, ["handbook/benefits/leave.md", "handbook/onboarding.md"])
        err = fs.not_found(f"{self.root}/handbook/policies/parental/leave.txt", self.root)
        self.assertIn(f". {self.root}/handbook/ has: ", err.message)
        grant = os.path.join(self.root, "handbook", "benefits")
        err = fs.not_found(f"{grant}/gone/deeper.md", grant)
        self.assertEqual(err.message, f"{grant}/gone/deeper.md: no such file or folder. {grant}/ has: leave.md — use one of these names, or list the folder")
        os.remove(os.path.join(grant, "leave.md"))
        os.rmdir(grant)
        # With the granted folder itself gone, the folder around it is no fallback.
        err = fs.not_found(f"{grant}/x.md", grant)
        self.assertEqual(err.message, f"{grant}/x.md: no such file or folder")

    def test_a_big_folder_offers_at_most_twenty_names_within_the_bound(self):
        tree(self.root, [f"file-{i:03}.txt" for i in range(100)])
        err = fs.not_found(f"{self.root}/file-042.md", self.root)
        listed = err.message.split(" has: ")[1].split(" (")[0]
        self.assertEqual(len(listed.split(", ")), 20)
        self.assertTrue(listed.startswith("file-042.txt, "), err.message)
        self.assertIn(" (80 more) — ", err.message)
        tree(self.root, [f"{i:03}-{'x' * 200}.txt" for i in range(30)])
        err = fs.not_found(f"{self.root}/000.txt", self.root)
        self.assertLessEqual(len(err.message), fs.MAX_MESSAGE)

    def test_an_empty_folder_says_so(self):
        err = fs.not_found(f"{self.root}/a.csv", self.root)
        self.assertEqual(err.message, f"{self.root}/a.csv: no such file or folder. {self.root}/ is empty")

    def test_open_reads_granted_files_as_utf8(self):
        with open(os.path.join(self.root, "a.txt"), "w", encoding="utf-8") as f:
            f.write("héllo")
        with fs.open(os.path.join(self.root, "a.txt")) as f:
            self.assertEqual(f.read(), "héllo")


class Similarity(unittest.TestCase):
    def test_case_separators_and_extensions_are_forgiven(self):
        self.assertEqual(fs.similarity("Report-2024.md", "report_2024.md"), 1.0)
        self.assertEqual(fs.similarity("report.txt", "report.md"), 1.0)
        self.assertLess(fs.similarity("zebra.csv", "orders.csv"), 0.7)


if __name__ == "__main__":
    unittest.main()
