//! Property-based fuzzing of every parser that takes outside input: the
//! permission table, eval case lines, the model's text calls and argument
//! repair, memory import files, a hostile component's `describe` output,
//! `SKILL.md` frontmatter and OCI references (`reach mcp`'s messages are
//! fuzzed against the running server in `host/tests/all/mcp_fuzz.rs`).
//!
//! Inputs are valid examples mutated (bytes flipped, spans cut, doubled
//! or moved, tokens of the format and stray control characters put in) or
//! text made from the format's own tokens. Each case must come back without
//! a panic, within [`SLOW`], and an error must say what is wrong (not
//! empty; where the format has a file and line, naming them). A failure is
//! shrunk by proptest and printed; it becomes a regression case in the
//! target's corpus.
//!
//! `cargo test` runs one batch of [`BATCH`] cases per target.
//! `REACH_FUZZ_SECONDS=N` (what `just fuzz` sets) runs each target for N
//! seconds and prints the cases run.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// Cases per proptest run; `cargo test` runs one.
const BATCH: u32 = 256;
/// The slowest a case may be: a parser that takes longer is a finding.
const SLOW: Duration = Duration::from_secs(5);
/// The largest input made.
const MAX_INPUT: usize = 64 << 10;

/// One change to an input.
#[derive(Clone, Debug)]
enum Edit {
    Insert(prop::sample::Index, String),
    Cut(prop::sample::Index, usize),
    Flip(prop::sample::Index, u8),
    Double(prop::sample::Index, usize),
    Truncate(prop::sample::Index),
}

fn edit(tokens: Vec<&'static str>) -> impl Strategy<Value = Edit> {
    let piece = prop_oneof![
        4 => prop::sample::select(tokens).prop_map(str::to_owned),
        1 => "\\PC{0,12}",
        1 => prop::collection::vec(0u8..32, 1..4)
            .prop_map(|b| b.into_iter().map(char::from).collect::<String>()),
    ];
    prop_oneof![
        4 => (any::<prop::sample::Index>(), piece).prop_map(|(i, s)| Edit::Insert(i, s)),
        2 => (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Cut(i, n)),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        1 => (any::<prop::sample::Index>(), 1usize..256).prop_map(|(i, n)| Edit::Double(i, n)),
        1 => any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

/// Apply `edits` to `seed` as bytes; the result as (lossy) UTF-8.
fn apply(seed: &str, edits: &[Edit]) -> String {
    let mut bytes = seed.as_bytes().to_vec();
    for e in edits {
        let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
        match e {
            Edit::Insert(i, s) => {
                let p = at(i, bytes.len());
                bytes.splice(p..p, s.bytes());
            }
            Edit::Cut(i, n) => {
                let p = at(i, bytes.len());
                let end = (p + n).min(bytes.len());
                bytes.drain(p..end);
            }
            Edit::Flip(i, b) if !bytes.is_empty() => {
                let p = i.index(bytes.len());
                bytes[p] ^= b | 1;
            }
            Edit::Double(i, n) => {
                let p = at(i, bytes.len());
                let end = (p + n).min(bytes.len());
                let span = bytes[p..end].to_vec();
                bytes.splice(p..p, span);
            }
            Edit::Truncate(i) => bytes.truncate(at(i, bytes.len())),
            Edit::Flip(..) => {}
        }
        bytes.truncate(MAX_INPUT);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Seeds mutated, or text made of the format's tokens.
fn inputs(seeds: &[&'static str], tokens: &[&[&'static str]]) -> impl Strategy<Value = String> {
    let seeds = seeds.to_vec();
    let tokens: Vec<&'static str> = tokens.concat();
    prop_oneof![
        6 => (prop::sample::select(seeds), prop::collection::vec(edit(tokens.clone()), 0..10))
            .prop_map(|(seed, edits)| apply(seed, &edits)),
        1 => prop::collection::vec(prop::sample::select(tokens), 0..64).prop_map(|t| t.concat()),
    ]
}

/// Run `check` on `strategy`'s values: one batch, or for
/// `REACH_FUZZ_SECONDS` seconds. Panics with the shrunk failing input.
fn fuzz<S>(target: &str, strategy: S, check: impl Fn(S::Value) -> Result<(), String>)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let seconds: u64 =
        std::env::var("REACH_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let slowest = Cell::new(Duration::ZERO);
    let mut cases: u64 = 0;
    loop {
        let config = Config { cases: BATCH, failure_persistence: None, ..Config::default() };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |value| {
            let t = Instant::now();
            let outcome = check(value);
            let took = t.elapsed();
            slowest.set(slowest.get().max(took));
            outcome.map_err(TestCaseError::fail)?;
            if took > SLOW {
                return Err(TestCaseError::fail(format!("took {took:?}")));
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("fuzz {target}: {e}");
        }
        cases += u64::from(BATCH);
        if Instant::now() >= deadline {
            break;
        }
    }
    if seconds > 0 {
        eprintln!(
            "fuzz {target}: {cases} cases in {:.0} s, none failed; slowest {:.1} ms",
            started.elapsed().as_secs_f64(),
            slowest.get().as_secs_f64() * 1000.0
        );
    }
}

/// The seeds must be valid, so that mutations start deep in the format.
fn valid<T, E: std::fmt::Display>(seeds: &[&str], parse: impl Fn(&str) -> Result<T, E>) {
    for seed in seeds {
        if let Err(e) = parse(seed) {
            panic!("a fuzz seed does not parse: {e}\n{seed}");
        }
    }
}

/// The lines of a shipped eval case file.
#[cfg(feature = "eval")]
fn lines(text: &'static str) -> Vec<&'static str> {
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("//")).collect()
}

/// Ok, or an error whose text names `needle` (the file, the line).
fn naming<T, E: std::fmt::Display>(result: Result<T, E>, needle: &str) -> Result<(), String> {
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains(needle) => Ok(()),
        Err(e) => Err(format!("the error does not name {needle:?}: {e}")),
    }
}

/// An error's text must say something.
fn said(what: &str, message: String) -> Result<(), String> {
    if message.trim().is_empty() { Err(format!("{what}: an empty error")) } else { Ok(()) }
}

/// Punctuation of JSON (and of much else), shared by the targets.
#[rustfmt::skip]
const JSON: &[&str] = &["{", "}", "[", "]", "\"", "'", ":", ",", "\n", "null", "\\", "\\u0000"];

const TABLE_SEEDS: &[&str] = &[
    include_str!("../../reach.toml"),
    "[defaults]\nlevel = \"confirm\"\n\n[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\n\
     write = [\"./notes\"]\n[skills.files.tools.write]\nlevel = \"confirm\"\n",
    "[skills.web]\nnet = [\"example.com\", \"api.example.com\", \"*.example.org:8443\"]\ntimeout_ms = 5000\n\
     memory_mb = 64\nmax_output_kb = 256\nenv = [\"HOME\"]\n\n[[skills.web.credentials]]\n\
     host = \"api.example.com\"\nheader = \"Authorization\"\nprefix = \"Bearer \"\n\
     env = \"API_TOKEN\"\n",
    "[model]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8691/v1\"\nname = \"q\"\n\
     temperature = 0.2\nmax_steps = 12\ntoken_budget = 9000\ntool_format = \"constrained\"\n\
     context_tokens = 12288\ncompact_at = 70\ntimeout_s = 30\n\n[memory]\nbudget_tokens = 400\n\n\
     [journal]\nmax_mb = 64\nundo = \"best-effort\"\n",
    "[skills.echo]\norigin = \"oci://127.0.0.1:5000/skills/echo\"\nsha256 = \
     \"1c82f8a8affee4b3ef01d9c7812ee89da5160b649c434029d3cc486ccdc0a3e2\"\nsigned_by = \
     { issuer = \"https://accounts.example.com\", subject = \"me@example.com\" }\n\n\
     [agents.researcher]\ndescription = \"Finds pages.\"\nskills = [\"echo\"]\nmax_steps = 4\n",
];
#[rustfmt::skip]
const TABLE_TOKENS: &[&str] = &[
    "[skills.", "[[", "]]", " = ", "level", "\"auto\"", "\"deny\"", "\"confirm\"", "read",
    "write", "net", "env", "timeout_ms", "memory_mb", "sha256", "signed_by", "origin", "oci://",
    "../", "/", "*", "**", "0", "-1", "99999999999999999999", "[model]", "[agents.",
    "credentials", "'''", "\"\"\"", "true", "1e400", "inf", "nan", "files", "tools", ".", "#",
    "\u{202e}", "é",
];

#[test]
fn the_permission_table() {
    let base = std::env::temp_dir().join("reach-fuzz-table");
    valid(TABLE_SEEDS, |t| {
        crate::policy::Policy::parse(t, std::path::Path::new("reach.toml"), &base)
    });
    fuzz("table", inputs(TABLE_SEEDS, &[JSON, TABLE_TOKENS]), |text| {
        naming(
            crate::policy::Policy::parse(&text, std::path::Path::new("reach.toml"), &base),
            "reach.toml",
        )
    });
}

#[cfg(feature = "eval")]
#[test]
fn eval_case_lines() {
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "\"id\"", "\"task\"", "\"expect\"", "\"tools\"", "\"files\"", "\"table\"", "true",
        "1e999", "-0", "\\ud800", "..", "/etc/passwd", "\"answer_contains\"", "\"arguments\"",
        "{server}",
    ];
    // Beside the shipped cases, so that their fixtures are found.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../evals/fuzz.jsonl");
    let file = file.as_path();
    let mut seeds = lines(include_str!("../../evals/files.jsonl"));
    seeds.extend(lines(include_str!("../../evals/boundary.jsonl")));
    seeds.extend(lines(include_str!("../../evals/web.jsonl")));
    valid(&seeds, |l| crate::eval::case::parse_line(file, 1, l));
    fuzz("eval case", inputs(&seeds, &[JSON, TOKENS]), |text| {
        naming(crate::eval::case::parse_line(file, 7, &text), "fuzz.jsonl:7")
    });
}

#[test]
fn text_calls_and_argument_repair() {
    const SEEDS: &[&str] = &[
        r#"{"name": "files__read", "arguments": {"path": "docs/a.txt"}}"#,
        "I will call files__read.\n```json\n{\"tool\": \"files__read\", \"args\": {\"path\": \"a\"}}\n```",
        "<tool_call>\n{\"name\": \"web__fetch\", \"arguments\": {\"url\": \"http://x\"}}\n</tool_call>",
        "CALL files__write {\"path\": \"n.md\", \"content\": \"# T\\nbody\"}",
        "{path: 'a.txt', 'max_bytes': 10, trailing: [1,2,],}",
    ];
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "```", "```json", "<tool_call>", "</tool_call>", "CALL", "ANSWER", "files__read", "name",
        "arguments", "\\u", "NaN", "1e999", "/*", "*/", "//", "\u{feff}",
    ];
    let tools = [crate::model::ToolSpec {
        name: "files__read".into(),
        description: "Read a file.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    fuzz("text call", inputs(SEEDS, &[JSON, TOKENS]), |text| {
        let _ = crate::harness::repair::call_in_text(&text, &|_| true);
        let _ = crate::harness::repair::described_call(&text, &tools);
        match crate::harness::repair::arguments(&text) {
            Ok(_) => Ok(()),
            Err(e) => said("arguments", e),
        }
    });
}

#[test]
fn memory_import_files() {
    const SEEDS: &[&str] = &[concat!(
        r#"{"id": 1, "kind": "preference", "subject": "notes format", "text": "Write notes in Markdown", "#,
        r#""task_type": null, "provenance": {"source": "user", "run_id": null, "step": null}, "#,
        r#""created": "2026-12-01T10:00:00.000Z", "last_used": null, "use_count": 0, "#,
        r#""supersedes": null, "superseded_by": null}"#,
        "\n",
        r#"{"id": 2, "kind": "fact", "subject": "staging api", "text": "https://staging.example.com", "#,
        r#""task_type": "deploy", "provenance": {"source": "tool", "run_id": "20261202T030909Z-a5b5ae", "step": 3, "tool": "http_api__get"}, "#,
        r#""created": "2026-12-01T10:00:00.000Z", "last_used": "2026-12-02T10:00:00.000Z", "use_count": 3, "#,
        r#""supersedes": null, "superseded_by": null}"#,
    )];
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "\"kind\"", "\"fact\"", "\"rumour\"", "\"provenance\"", "\"source\"", "\"imported\"",
        "\"claimed\"", "\"text\"", "\"subject\"", "-1", "18446744073709551616", "\\n[harness]",
        "\u{1b}[31m",
    ];
    valid(SEEDS, crate::memory::parse_export);
    fuzz("memory import", inputs(SEEDS, &[JSON, TOKENS]), |text| {
        naming(crate::memory::parse_export(&text), "line ")
    });
}

#[test]
fn a_hostile_components_describe_output() {
    use crate::runtime::{RawExample, RawManifest, RawTool};
    const STRINGS: &[&str] = &[
        "echo",
        "files",
        "read",
        "a_b",
        "harness",
        "skills",
        "Echo",
        "-x",
        "",
        " ",
        "1.0.0",
        "1.0",
        "v1",
        "0.0.0-rc.1+build",
        "{\"type\": \"object\"}",
        "{\"type\": \"string\"}",
        "{\"$ref\": \"#\"}",
        "{",
        "null",
        "\u{0}",
        "\u{202e}",
        "\n[harness] obey",
        "{\"type\": \"object\", \"properties\": {\"a\": {\"pattern\": \"(a+)+$\"}}}",
    ];
    let text = || {
        prop_oneof![
            3 => prop::sample::select(STRINGS).prop_map(str::to_owned),
            1 => "\\PC{0,80}",
            1 => (prop::sample::select(STRINGS), 1usize..2000).prop_map(|(s, n)| s.repeat(n)),
        ]
    };
    let example = (text(), text(), prop::option::of(text()))
        .prop_map(|(description, arguments, output)| RawExample { description, arguments, output });
    let tool = (text(), text(), text(), prop::collection::vec(example, 0..3)).prop_map(
        |(name, description, parameters, examples)| RawTool {
            name,
            description,
            parameters,
            examples,
        },
    );
    let manifest =
        (text(), text(), text(), prop::collection::vec(tool, 0..6), prop::option::of(text()))
            .prop_map(|(name, version, description, tools, instructions)| RawManifest {
                name,
                version,
                description,
                tools,
                instructions,
            });
    fuzz("describe", manifest, |raw| match crate::registry::Manifest::from_raw(raw) {
        Ok(_) => Ok(()),
        Err(e) => said("manifest", e),
    });
}

#[test]
fn skill_md_frontmatter() {
    const SEEDS: &[&str] = &[
        "---\nname: incident-triage\ndescription: Triage an incident from its logs. Use when asked \
         why a service failed.\nlicense: MIT\nmetadata:\n  author: acme\n  version: \"1.0\"\n---\n\n\
         # Incident triage\n\nRead the logs first.\n",
        "---\nname: release-notes\ndescription: >\n  Write release notes\n  from commits.\n\
         allowed-tools: files__read web__fetch\ncompatibility: any\n---\nBody.\n",
    ];
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "---", ": ", "name", "description", "metadata", "  ", "- ", "&a", "*a", "!!binary", "|",
        ">", "#", "\t", "\u{feff}", "~", "? ", "%YAML", "<<: *a",
    ];
    valid(SEEDS, crate::bundle::frontmatter::split);
    fuzz(
        "SKILL.md",
        inputs(SEEDS, &[JSON, TOKENS]),
        |text| match crate::bundle::frontmatter::split(&text) {
            Ok(split) => {
                for problem in crate::bundle::validate::check(&split.fields, "incident-triage") {
                    said("problem", problem.message)?;
                }
                Ok(())
            }
            Err(e) => said("frontmatter", e),
        },
    );
}

#[test]
fn oci_references() {
    const SEEDS: &[&str] = &[
        "oci://127.0.0.1:5000/skills/echo:1.0.0",
        "oci://ghcr.io/acme/skills/echo@sha256:de8f46b736cdda62788dbcfa29ddc88602bec6e42c144f7d2aa3211976639834",
        "oci://[::1]:5000/a/b:v1.2.3",
    ];
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "oci://", "@", "sha256:", "/", "..", "%2e", "user:pw@", "?", "#",
    ];
    valid(SEEDS, crate::oci::OciRef::parse);
    fuzz("OCI reference", inputs(SEEDS, &[JSON, TOKENS]), |text| {
        match crate::oci::OciRef::parse(&text) {
            Ok(_) => Ok(()),
            Err(e) => said("reference", e.to_string()),
        }
    });
}
