"""Descriptions from docstrings: the tool's text and each parameter's."""

import unittest

import support  # noqa: F401
from agent_reach import docstrings


class Docstrings(unittest.TestCase):
    def test_google_args_become_parameters_and_leave_the_description(self):
        text, params = docstrings.parse(
            """Rows of a table that match conditions.

            Use it to find rows; use `aggregate` to count them.

            Args:
                path: The file, absolute or relative to the working
                    directory.
                limit (int): Most rows to return.

            Returns:
                The rows.
            """
        )
        self.assertEqual(
            text,
            "Rows of a table that match conditions.\n\nUse it to find rows; use `aggregate` to count "
            "them.\n\nReturns:\n    The rows.",
        )
        self.assertEqual(
            params,
            {"path": "The file, absolute or relative to the working directory.", "limit": "Most rows to return."},
        )

    def test_rest_fields(self):
        text, params = docstrings.parse(
            """Greet someone.

            :param name: Who to greet,
                by first name.
            :param int times: How often.
            :returns: the greeting
            """
        )
        self.assertEqual(params, {"name": "Who to greet, by first name.", "times": "How often."})
        self.assertEqual(text, "Greet someone.\n\n:returns: the greeting")

    def test_numpy_sections(self):
        text, params = docstrings.parse(
            """Greet someone.

            Parameters
            ----------
            name : str
                Who to greet.
            loud : bool
                Shout
                it.

            Notes
            -----
            Friendly.
            """
        )
        self.assertEqual(params, {"name": "Who to greet.", "loud": "Shout it."})
        self.assertEqual(text, "Greet someone.\n\nNotes\n-----\nFriendly.")

    def test_no_docstring(self):
        self.assertEqual(docstrings.parse(None), ("", {}))

    def test_a_colon_in_the_text_is_not_a_section(self):
        text, params = docstrings.parse("Compare values: numbers numerically, text as text.")
        self.assertEqual(text, "Compare values: numbers numerically, text as text.")
        self.assertEqual(params, {})


if __name__ == "__main__":
    unittest.main()
