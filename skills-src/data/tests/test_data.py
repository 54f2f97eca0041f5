"""The data skill's tools on small files, in a plain CPython:
python3 -m unittest discover -s skills-src/data/tests

Every expectation is what a user of the answer would notice: the count, the
total, the row, the line of a syntax error, the columns offered.
"""

import io
import json
import os
import pathlib
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[2] / "sdk" / "python")]

import app  # noqa: E402
from agent_reach import ErrorCode, ToolError  # noqa: E402
from dataskill import jsonarray  # noqa: E402

ORDERS = """order_id,date,region,customer,amount,qty
1,2024-01-05,North,Ada,120.50,2
2,2024-01-20,South,Bo,80.00,1
3,2024-02-02,North,Cy,,3
4,2024-02-14,north,Ada,300.25,5
5,2024-03-01,East,Di,19.99,1
6,2024-03-09,South,Ed,n/a,2
"""


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def call(self, tool, **arguments):
        return json.loads(app.skill.call(tool, json.dumps(arguments)))

    def error(self, tool, **arguments):
        with self.assertRaises(ToolError) as caught:
            app.skill.call(tool, json.dumps(arguments))
        return caught.exception


class Describe(Files):
    def test_columns_types_ranges_and_values(self):
        got = self.call("describe", path=self.file("orders.csv", ORDERS))
        self.assertEqual((got["format"], got["rows"]), ("csv", 6))
        columns = {c["name"]: c for c in got["columns"]}
        self.assertEqual(columns["order_id"]["type"], "integer")
        self.assertEqual((columns["date"]["type"], columns["date"]["first"], columns["date"]["last"]), ("date", "2024-01-05", "2024-03-09"))
        self.assertEqual(columns["region"]["values"], {"North": 2, "South": 2, "north": 1, "East": 1})
        amount = columns["amount"]
        self.assertEqual((amount["type"], amount["empty"], amount["min"], amount["max"]), ("mixed", 1, 19.99, 300.25))
        self.assertEqual(amount["kinds"], {"number": 4, "text": 1})
        self.assertEqual(got["sample"][0]["customer"], "Ada")

    def test_json_records_nested_objects_and_an_object_holding_them(self):
        path = self.file("people.json", json.dumps({"meta": {"n": 2}, "people": [{"name": "Ada", "home": {"city": "Oslo"}}, {"name": "Bo", "home": {"city": "Rome"}, "age": 40}]}))
        got = self.call("describe", path=path)
        self.assertEqual((got["format"], got["records_at"], got["rows"]), ("json", "people", 2))
        self.assertEqual([c["name"] for c in got["columns"]], ["name", "home", "home.city", "age"])
        self.assertEqual(got["columns"][3]["empty"], 1)

    def test_json_lines_saved_as_json_and_semicolons_are_recognised(self):
        got = self.call("describe", path=self.file("events.json", '{"a": 1}\n{"a": 2}\n'))
        self.assertEqual((got["format"], got["rows"]), ("jsonl", 2))
        got = self.call("describe", path=self.file("eu.csv", "name;city\nAda;Oslo\n"))
        self.assertEqual((got["delimiter"], got["columns"][1]["values"]), (";", {"Oslo": 1}))

    def test_a_windows_1252_file_is_read(self):
        path = os.path.join(self.dir.name, "w.csv")
        with open(path, "wb") as f:
            f.write("name,price\nCafé,3\n".encode("cp1252"))
        got = self.call("describe", path=path)
        self.assertEqual((got["encoding"], got["sample"][0]["name"]), ("cp1252", "Café"))


class Malformed(Files):
    def test_json_errors_give_line_and_column(self):
        err = self.error("query", path=self.file("bad.json", '[\n  {"a": 1},\n  {"a": 2 "b": 3}\n]\n'))
        self.assertEqual(err.code, ErrorCode.FAILED)
        self.assertTrue(err.message.endswith("bad.json: line 3, column 11: expecting ',' delimiter"), err.message)
        err = self.error("query", path=self.file("bad.jsonl", '{"a": 1}\n{"a": }\n'))
        self.assertTrue(err.message.endswith("bad.jsonl: line 2, column 7: Expecting value (each line must be one JSON object)"), err.message)
        err = self.error("query", path=self.file("list.jsonl", '{"a": 1}\n[1]\n'))
        self.assertIn("line 2, column 1: this line holds an array, not an object", err.message)

    def test_a_csv_row_with_too_many_fields_names_its_line(self):
        err = self.error("aggregate", path=self.file("bad.csv", "a,b\n1,2\n3,4,5\n"))
        self.assertIn("bad.csv: line 3: this row has 3 fields but the header has 2 (a, b)", err.message)
        # Trailing delimiters lose nothing and are accepted.
        self.assertEqual(self.call("aggregate", path=self.file("ok.csv", "a,b\n1,2,\n"))["results"][0]["value"], 1)

    def test_chunk_boundaries_do_not_change_positions(self):
        text = "[\n" + ",\n".join(json.dumps({"n": i, "s": "x" * (i % 7)}) for i in range(50)) + ",\n  {\"n\": tru}\n]"
        for chunk in (1, 3, 64, 1 << 20):
            saved, jsonarray.CHUNK = jsonarray.CHUNK, chunk
            try:
                with self.assertRaises(jsonarray.Malformed) as caught:
                    list(jsonarray.elements(io.StringIO(text)))
            finally:
                jsonarray.CHUNK = saved
            self.assertEqual((caught.exception.line, caught.exception.column), (52, 9), chunk)


class Paths(Files):
    def test_unknown_columns_list_the_columns_and_suggest_one(self):
        path = self.file("orders.csv", ORDERS)
        err = self.error("query", path=path, where=[{"column": "regoin", "op": "=", "value": "x"}])
        self.assertEqual(err.code, ErrorCode.INVALID_ARGUMENTS)
        self.assertIn("where[0].column: no column `regoin`", err.message)
        self.assertIn("Did you mean `region`? Its columns are: order_id, date, region, customer, amount, qty", err.message)
        path = self.file("p.jsonl", '{"a": 1}\n{"b": 2}\n')
        err = self.error("aggregate", path=path, op="sum", column="c")
        self.assertIn("column: no column `c`", err.message)
        self.assertIn("Its columns are: a, b", err.message)

    def test_a_column_first_seen_late_in_json_is_found(self):
        rows = [{"a": i} for i in range(1500)] + [{"a": 1, "late": "yes"}]
        path = self.file("late.json", json.dumps(rows))
        got = self.call("query", path=path, where=[{"column": "late", "op": "=", "value": "yes"}])
        self.assertEqual(got["matched"], 1)

    def test_a_folder_lists_its_tables(self):
        self.file("a.csv", "x\n1\n")
        self.file("notes.txt", "x")
        err = self.error("describe", path=self.dir.name)
        self.assertIn("is a folder; give one file. Its tables: a.csv.", err.message)

    def test_a_compressed_file_is_refused_with_what_to_do(self):
        path = os.path.join(self.dir.name, "a.csv.gz")
        with open(path, "wb") as f:
            f.write(b"\x1f\x8b\x08\x00")
        self.assertIn("gzip-compressed", self.error("describe", path=path).message)


class Query(Files):
    def test_numbers_compare_as_numbers_and_text_ignores_case(self):
        path = self.file("orders.csv", ORDERS)
        got = self.call("query", path=path, where=[{"column": "region", "op": "=", "value": "NORTH"}, {"column": "amount", "op": ">", "value": 100}], columns=["order_id", "amount"])
        self.assertEqual(got["rows"], [{"order_id": "1", "amount": "120.50"}, {"order_id": "4", "amount": "300.25"}])
        got = self.call("query", path=path, where=[{"column": "region", "op": "=", "value": "North"}], case_sensitive=True)
        self.assertEqual(got["matched"], 2)

    def test_dates_order_as_text_and_empty_cells_match_only_empty(self):
        path = self.file("orders.csv", ORDERS)
        self.assertEqual(self.call("query", path=path, where=[{"column": "date", "op": ">=", "value": "2024-02-01"}])["matched"], 4)
        self.assertEqual(self.call("query", path=path, where=[{"column": "amount", "op": "<", "value": 1000}])["matched"], 4)
        self.assertEqual(self.call("query", path=path, where=[{"column": "amount", "op": "empty"}])["rows"][0]["order_id"], "3")
        self.assertEqual(self.call("query", path=path, where=[{"column": "amount", "op": "!=", "value": 80}])["matched"], 5)
        self.assertEqual(self.call("query", path=path, where=[{"column": "customer", "op": "in", "value": ["ada", "Di"]}])["matched"], 3)

    def test_sorting_pages_and_says_what_was_left_out(self):
        path = self.file("orders.csv", ORDERS)
        got = self.call("query", path=path, sort_by="amount", order="desc", limit=2, columns=["order_id"])
        self.assertEqual(got["rows"], [{"order_id": "4"}, {"order_id": "1"}])
        self.assertTrue(got["truncated"])
        self.assertIn("call again with offset 2", got["note"])
        got = self.call("query", path=path, sort_by="amount", order="desc", limit=10, offset=2, columns=["order_id"])
        # Going down: the numbers, then text ("n/a"), the empty cell last.
        self.assertEqual([r["order_id"] for r in got["rows"]], ["2", "5", "6", "3"])
        self.assertEqual(self.call("query", path=path, limit=0)["matched"], 6)


class Aggregate(Files):
    def test_sum_per_group_largest_first_and_non_numbers_said(self):
        got = self.call("aggregate", path=self.file("orders.csv", ORDERS), op="sum", column="amount", group_by=["region"])
        self.assertEqual([(r["region"], r["value"]) for r in got["results"]], [("north", 300.25), ("North", 120.5), ("South", 80), ("East", 19.99)])
        self.assertEqual((got["empty_values"], got["not_numbers"], got["not_number_example"]), (1, 1, "n/a"))

    def test_each_operation(self):
        path = self.file("orders.csv", ORDERS)
        value = lambda **a: self.call("aggregate", path=path, **a)["results"][0]["value"]
        self.assertEqual(value(), 6)
        self.assertEqual(value(op="count", column="amount"), 5)
        self.assertEqual(value(op="distinct", column="customer"), 5)
        self.assertEqual(value(op="sum", column="qty"), 14)
        self.assertAlmostEqual(value(op="mean", column="qty"), 14 / 6)
        self.assertEqual(value(op="median", column="qty"), 2)
        self.assertEqual(value(op="median", column="amount"), 100.25)
        self.assertEqual(value(op="max", column="date"), "2024-03-09")
        self.assertEqual(value(op="min", column="amount"), 19.99)
        self.assertEqual(value(op="count", where=[{"column": "amount", "op": ">", "value": 100}]), 2)

    def test_cents_add_up_exactly(self):
        text = "amount\n" + "0.10\n" * 1000
        self.assertEqual(self.call("aggregate", path=self.file("c.csv", text), op="sum", column="amount")["results"][0]["value"], 100.0)

    def test_groups_are_capped_in_the_answer(self):
        text = "k\n" + "".join(f"{i}\n" for i in range(60))
        got = self.call("aggregate", path=self.file("k.csv", text), group_by=["k"], limit=5)
        self.assertEqual((got["groups"], len(got["results"]), got["truncated"]), (60, 5, True))


if __name__ == "__main__":
    unittest.main()
