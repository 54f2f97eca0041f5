"""The `data` skill: questions over CSV and JSON files in the folders the
operator granted, answered in one streaming pass over the file.

Three tools: `describe` (what a table holds), `query` (rows that match
conditions) and `aggregate` (counts, sums, means… per group). Each opens the
file (`dataskill.source`), reads it as a stream of rows and keeps only what
its answer needs, so files larger than the sandbox's memory work. As in the
Rust skills, the runtime enforces the grants; refusals become errors that
list them (`agent_reach.fs`).

Built with componentize-py against the SDK's WIT: `./build.sh data.wasm`.
"""

from typing import Annotated, List, Literal, Optional

from agent_reach import Skill, export

from dataskill import aggregate as aggregate_tool
from dataskill import describe as describe_tool
from dataskill import query as query_tool
from dataskill.conditions import Condition
from dataskill.source import open_table

#: For the model choosing among skills.
DESCRIPTION = (
    "Answer questions about CSV, TSV, JSON and JSON-lines data files on the host: what columns a "
    "table has, which rows match conditions, and counts, sums, averages, minimums, maximums and "
    "medians per group. Reads files of any size without loading them; only granted folders are "
    "reachable; read-only."
)

#: Shown when a model asks for this skill.
INSTRUCTIONS = """# Answering questions about data files

Use these tools instead of reading a CSV or JSON file: each reads the whole file once, however
large, and answers in a few KB.

## A good order
1. `describe {path}` — the columns with their types, empty cells, ranges (min/max, first/last
   date), the values of text columns (spelled as in the file), the row count and a few sample
   rows. Do this first: conditions must name columns and values as the file has them.
2. `aggregate` for any number: how many rows (`op: "count"`), a total (`sum`), an average
   (`mean`), `min`, `max`, `median`, or how many different values (`distinct`) of a `column`,
   optionally per group (`group_by`) and only over rows meeting `where`. Results come sorted,
   largest value first (`order: "desc"`). Never add up rows yourself.
3. `query` to see rows: those meeting every condition in `where`, only the `columns` you need,
   sorted with `sort_by` and `order`, at most `limit` (default 20, at most 200). `matched` is
   the number of all matching rows; when `truncated` is true, use `offset` for the next page.

## Conditions
`where` is a list of `{"column", "op", "value"}`; all must hold. Numbers compare as numbers,
even in a CSV file (`"price" > 100`); everything else compares as text, ignoring upper and
lower case unless `case_sensitive` is true. ISO dates (`2024-03-01`) order correctly, so
`{"column": "date", "op": ">=", "value": "2024-03-01"}` selects March onwards; `<` `>` with a
number never match a cell that is not a number (`n/a`). Ops: `=` `!=`
`<` `<=` `>` `>=` `contains` `startswith` `endswith`, `in` (value is a list), `empty`,
`not_empty`. An empty cell matches only `empty`, `= null`, `!=` and `in` lists holding null.

## Files
- Paths are absolute or relative to the host's working directory. A `denied` error lists the
  granted folders: do not retry other spellings, ask the user.
- The format comes from the extension (`.csv`, `.tsv`, `.json`, `.jsonl`) and the content; give
  `format` to force one. CSV needs a header line; the delimiter (`,` `;` tab `|`) is detected.
  JSON is an array of objects, an object holding one (`records_at` says which key), or one
  object per line. Nested objects are reached with dotted names (`customer.city`).
- A malformed file is reported with its line (and column for JSON): tell the user where.
- `median` and `distinct` keep the values they need in memory (up to 2 million); the other
  operations need almost none.
"""

skill = Skill("data", "0.1.0", DESCRIPTION, instructions=INSTRUCTIONS)

Path = Annotated[str, "The data file: absolute, or relative to the host's working directory."]
Format = Annotated[
    Optional[Literal["csv", "tsv", "json", "jsonl"]],
    "Read the file as this format instead of recognising it from its extension and content.",
]
Where = Annotated[
    List[Condition],
    "Conditions every counted row must meet (all of them), e.g. "
    '[{"column": "region", "op": "=", "value": "North"}, {"column": "amount", "op": ">", "value": 100}].',
]
CaseSensitive = Annotated[bool, "Compare text with upper and lower case exactly (default false: ignore case)."]


@skill.tool(
    examples=[
        {
            "description": "What is in the orders export?",
            "arguments": {"path": "exports/orders.csv"},
            "output": (
                '{"path":"/home/ana/exports/orders.csv","format":"csv","rows":3000,"columns":['
                '{"name":"order_id","type":"integer","empty":0,"min":1001,"max":4000},'
                '{"name":"region","type":"text","empty":0,"distinct":4,"values":{"North":812,'
                '"South":790,"East":731,"West":667}},{"name":"amount","type":"number","empty":3,'
                '"min":4.5,"max":1890.0},{"name":"date","type":"date","empty":0,'
                '"first":"2024-01-01","last":"2024-03-31"}],"sample":[{"order_id":"1001",'
                '"region":"North","amount":"120.50","date":"2024-01-01"}]}'
            ),
        }
    ]
)
def describe(path: Path, format: Format = None) -> dict:
    """What a data file holds: its columns with their types (integer, number, date, text, …),
    how many cells are empty, the smallest and largest number or date of each column, the
    values of text columns with how often each occurs, the number of rows, and five sample rows.
    Use it first on any CSV or JSON file, to learn the exact column names and how values are
    spelled before calling `query` or `aggregate`. Reads the whole file once.
    """
    with open_table("describe", path, format) as table:
        return describe_tool.describe(table)


@skill.tool(
    examples=[
        {
            "description": "The five largest orders from the North region in March.",
            "arguments": {
                "path": "exports/orders.csv",
                "where": [
                    {"column": "region", "op": "=", "value": "North"},
                    {"column": "date", "op": ">=", "value": "2024-03-01"},
                ],
                "columns": ["order_id", "customer", "amount"],
                "sort_by": "amount",
                "order": "desc",
                "limit": 5,
            },
            "output": (
                '{"path":"/home/ana/exports/orders.csv","matched":268,"filter":"region = \'North\' and '
                'date >= \'2024-03-01\'","sorted_by":"amount desc","rows":[{"order_id":"3712",'
                '"customer":"Hill & Co","amount":"1890.00"}],"truncated":true,"note":"showing rows '
                '1–5 of 268 matches; call again with offset 5 for more"}'
            ),
        }
    ]
)
def query(
    path: Path,
    where: Where = [],
    columns: Annotated[
        Optional[List[str]], "Only these columns in each row, in this order (default: every column)."
    ] = None,
    sort_by: Annotated[Optional[str], "Sort the matching rows by this column (numbers as numbers)."] = None,
    order: Annotated[Literal["asc", "desc"], "Sort order: `asc` smallest first, `desc` largest first."] = "asc",
    limit: Annotated[int, "Most rows to return (default 20, at most 200; 0 only counts).", {"minimum": 0, "maximum": 200}] = 20,
    offset: Annotated[int, "Skip this many matching rows first, to page through them.", {"minimum": 0}] = 0,
    case_sensitive: CaseSensitive = False,
    format: Format = None,
) -> dict:
    """The rows of a data file that meet every condition in `where`, with only the `columns`
    asked for, sorted by `sort_by`, at most `limit` of them. `matched` counts every matching row,
    and `truncated` says there are more than were shown. Use it to look up or list rows (an
    order, the ten most expensive products); for a count, total or average over rows use
    `aggregate`, which is exact however many rows match.
    """
    with open_table("query", path, format) as table:
        return query_tool.query(table, where, columns, sort_by, order, limit, offset, case_sensitive)


@skill.tool(
    examples=[
        {
            "description": "Total sales per region in Q1, largest first.",
            "arguments": {
                "path": "exports/orders.csv",
                "op": "sum",
                "column": "amount",
                "group_by": ["region"],
                "where": [{"column": "date", "op": "<", "value": "2024-04-01"}],
            },
            "output": (
                '{"path":"/home/ana/exports/orders.csv","op":"sum","column":"amount","group_by":'
                '["region"],"filter":"date < \'2024-04-01\'","rows_matched":3000,"groups":4,'
                '"results":[{"region":"North","value":98210.5,"rows":812},{"region":"South",'
                '"value":90114.25,"rows":790}],"truncated":false}'
            ),
        },
        {
            "description": "How many orders are there over 500?",
            "arguments": {"path": "exports/orders.csv", "where": [{"column": "amount", "op": ">", "value": 500}]},
        },
    ]
)
def aggregate(
    path: Path,
    op: Annotated[
        Literal["count", "distinct", "sum", "mean", "min", "max", "median"],
        "What to compute: `count` rows (or non-empty values of `column`), `distinct` values of "
        "`column`, or the `sum`, `mean` (average), `min`, `max` or `median` of the numbers in `column`.",
    ] = "count",
    column: Annotated[Optional[str], "The column to compute over; needed for every op but `count`."] = None,
    group_by: Annotated[List[str], "One value per distinct value of these columns (default: one value for all rows)."] = [],
    where: Where = [],
    order: Annotated[
        Literal["desc", "asc", "group"],
        "Order of the results: `desc` largest value first (default), `asc` smallest first, `group` by the group's values.",
    ] = "desc",
    limit: Annotated[int, "Most groups to return (default 50, at most 500).", {"minimum": 1, "maximum": 500}] = 50,
    case_sensitive: CaseSensitive = False,
    format: Format = None,
) -> dict:
    """Compute one number over the rows of a data file, or one per group: how many rows, how
    many distinct values, or the sum, mean, min, max or median of a column — e.g. total revenue
    per region, the average price per category, the number of orders per month, the latest date.
    Only rows meeting every condition in `where` count. Exact over the whole file, however large;
    use it for every "how many", "how much", "which is the most" question instead of adding up
    rows from `query`. Values that are not numbers are left out of sums and averages and counted
    in `not_numbers`.
    """
    with open_table("aggregate", path, format) as table:
        return aggregate_tool.aggregate(table, op, column, group_by, where, order, limit, case_sensitive)


Guest = export(skill)
