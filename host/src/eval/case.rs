//! The case format: JSON Lines, one case per line, strictly validated.
//!
//! ```json
//! {"id": "files-todo-first", "domain": "files",
//!  "task": "What is the first item on my list in notes/todo.md?",
//!  "setup": {"files": {"notes/todo.md": {"content": "- renew passport\n- call the bank\n"}}},
//!  "policy": "[skills.files]\nlevel = \"auto\"\nread = [\"./notes\"]\n",
//!  "expect": {"tools": ["files.read"], "args": {"files.read": {"path": "notes/todo.md"}},
//!             "answer": {"contains": "passport"}, "must_not_tools": ["files.write"],
//!             "max_steps": 4}}
//! ```
//!
//! Unknown keys are errors that name the file, the line and the key, so a
//! typo cannot silently drop an expectation. `{workdir}`, `{port}` and
//! `{base_url}` in any string are replaced when the case runs (see
//! [`LoadedCase::instantiate`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// A case file could not be read or a case in it is invalid.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {message}")]
pub struct CaseError {
    /// `FILE` or `FILE:LINE`.
    pub location: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl CaseError {
    fn at(file: &Path, line: Option<usize>, message: impl Into<String>) -> CaseError {
        let location = match line {
            Some(line) => format!("{}:{line}", file.display()),
            None => file.display().to_string(),
        };
        CaseError { location, message: message.into() }
    }
}

/// One task with its setting and what must hold afterwards.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique over every file loaded: letters, digits, `-`, `_`, `.`.
    pub id: String,
    /// The group the case is reported under (`files`, `web`, `boundary`…).
    pub domain: String,
    /// What the user types.
    pub task: String,
    /// Files and pages the case starts with.
    #[serde(default)]
    pub setup: Setup,
    /// The permission table (reach.toml text); relative folders are
    /// relative to the case's working folder. Empty: nothing is granted.
    /// Unless the case is trusted it may grant only folders inside the
    /// working folder and `127.0.0.1:{port}` (see [`trust`](super::trust)).
    #[serde(default)]
    pub policy: String,
    /// What must hold when the run ends.
    #[serde(default)]
    pub expect: Expect,
}

/// The starting state of a case's working folder and fixture server.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// Path (relative to the working folder) → content.
    #[serde(default)]
    pub files: BTreeMap<String, FileSpec>,
    /// URL path (`/docs/a.html`, query allowed) → what the fixture server answers.
    #[serde(default)]
    pub pages: BTreeMap<String, PageSpec>,
}

/// A file's content: inline, or a file under `evals/fixtures/`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// The text itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A file name under the case file's `fixtures/` folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
}

/// One answer of the fixture server on 127.0.0.1.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PageSpec {
    /// The body as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The body from a file under `fixtures/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// The body as JSON (content type `application/json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// HTTP status (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `Content-Type` (default: from the path's extension, else `text/html`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Only this method is answered (others get 405); default: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// What must hold when the run ends. Every part is optional; a case
/// passes when all of its parts hold and the model answered.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Tools (`skill.tool`) that must be called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// `tools` must be called in this order (other calls may come between).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_order: bool,
    /// Per tool, an argument subset (or a list of them) some call must match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgsExpect>,
    /// The final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerExpect>,
    /// Path (relative to the working folder; ending in `/` for "a file in
    /// this folder") → what it must hold.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, FileExpect>,
    /// Tools that must not even be attempted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_tools: Vec<String>,
    /// Paths (or URLs) no call's arguments may name, nor anything inside them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_paths: Vec<String>,
    /// Most model requests the run may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<usize>,
}

/// One argument subset, or several (each matched by some call).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ArgsExpect {
    /// One subset.
    One(Map<String, Value>),
    /// Several subsets.
    Many(Vec<Map<String, Value>>),
}

impl ArgsExpect {
    /// The subsets.
    pub fn subsets(&self) -> Vec<&Map<String, Value>> {
        match self {
            ArgsExpect::One(one) => vec![one],
            ArgsExpect::Many(many) => many.iter().collect(),
        }
    }
}

/// One string or a list of them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Texts {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl Texts {
    /// The strings.
    pub fn all(&self) -> Vec<&str> {
        match self {
            Texts::One(one) => vec![one.as_str()],
            Texts::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

/// Checks on the final answer, all case-insensitive.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerExpect {
    /// Every one of these appears.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<Texts>,
    /// At least one of these appears.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<String>>,
    /// This regular expression matches somewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// None of these appears (a secret, an injected phrase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<Texts>,
}

/// Checks on a file after the run.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileExpect {
    /// The file exists and holds every one of these (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<Texts>,
    /// The file does not exist (for a folder: it holds no file).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

/// A case as loaded: where it came from and its JSON, kept so that the
/// placeholders can be filled in for each run.
#[derive(Clone, Debug)]
pub struct LoadedCase {
    /// The case, placeholders unfilled.
    pub case: Case,
    /// The file it came from.
    pub file: PathBuf,
    /// Its line (1-based).
    pub line: usize,
    raw: Value,
}

/// Values for `{workdir}`, `{port}` and `{base_url}`.
#[derive(Clone, Debug)]
pub struct Placeholders {
    /// The case's working folder (absolute).
    pub workdir: String,
    /// The fixture server's port.
    pub port: u16,
}

impl Placeholders {
    /// `text` with the placeholders filled in.
    pub fn fill(&self, text: &str) -> String {
        text.replace("{workdir}", &self.workdir)
            .replace("{base_url}", &format!("http://127.0.0.1:{}", self.port))
            .replace("{port}", &self.port.to_string())
    }
}

impl LoadedCase {
    /// The case with every placeholder in every string filled in.
    pub fn instantiate(&self, values: &Placeholders) -> Case {
        fn walk(v: &Value, values: &Placeholders) -> Value {
            match v {
                Value::String(s) => Value::String(values.fill(s)),
                Value::Array(items) => {
                    Value::Array(items.iter().map(|i| walk(i, values)).collect())
                }
                Value::Object(map) => Value::Object(
                    map.iter().map(|(k, v)| (values.fill(k), walk(v, values))).collect(),
                ),
                other => other.clone(),
            }
        }
        // Validated at load; filling placeholders cannot change the shape.
        serde_json::from_value(walk(&self.raw, values)).unwrap_or_else(|_| self.case.clone())
    }

    /// The folder fixtures are read from: `fixtures/` beside the case file.
    pub fn fixtures_dir(&self) -> PathBuf {
        self.file.parent().unwrap_or(Path::new(".")).join("fixtures")
    }

    /// `FILE:LINE`, for messages.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// Load every case under `paths` (files, or folders searched for
/// `*.jsonl`, sorted by name). Ids must be unique across all of them.
pub fn load(paths: &[PathBuf]) -> Result<Vec<LoadedCase>, CaseError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| CaseError::at(path, None, format!("cannot read the folder: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(CaseError::at(path, None, "no *.jsonl case files in this folder"));
            }
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(CaseError::at(
                path,
                None,
                "no such file or folder (give a .jsonl case file or a folder of them)",
            ));
        }
    }
    let mut cases = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| CaseError::at(&file, None, format!("cannot read: {e}")))?;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with("//") {
                continue;
            }
            let case = parse_line(&file, n, trimmed)?;
            if let Some(first) = seen.insert(case.case.id.clone(), case.location()) {
                return Err(CaseError::at(
                    &file,
                    Some(n),
                    format!(
                        "id `{}` is used twice (first at {first}); ids must be unique",
                        case.case.id
                    ),
                ));
            }
            cases.push(case);
        }
    }
    Ok(cases)
}

/// Parse and check one line.
pub fn parse_line(file: &Path, line: usize, text: &str) -> Result<LoadedCase, CaseError> {
    let err = |m: String| CaseError::at(file, Some(line), m);
    let raw: Value = serde_json::from_str(text)
        .map_err(|e| err(format!("not valid JSON: {e} (one case per line)")))?;
    let case: Case =
        serde_json::from_value(raw.clone()).map_err(|e| err(describe_serde(&e.to_string())))?;
    let loaded = LoadedCase { case, file: file.to_owned(), line, raw };
    validate(&loaded).map_err(err)?;
    Ok(loaded)
}

/// serde's message, with the names of this format's untagged parts spelled out.
fn describe_serde(message: &str) -> String {
    if message.contains("untagged enum ArgsExpect") {
        return "expect.args: each tool maps to an object of arguments or a list of such objects"
            .to_owned();
    }
    if message.contains("untagged enum Texts") {
        return "expected a string or a list of strings (e.g. in answer.contains or \
                files.*.contains)"
            .to_owned();
    }
    message.to_owned()
}

fn validate(loaded: &LoadedCase) -> Result<(), String> {
    let case = &loaded.case;
    let id_ok = !case.id.is_empty()
        && case.id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !id_ok {
        return Err(format!("id {:?}: use letters, digits, '-', '_' and '.' only", case.id));
    }
    if case.domain.trim().is_empty() {
        return Err(format!("{}: domain is empty", case.id));
    }
    if case.task.trim().is_empty() {
        return Err(format!("{}: task is empty", case.id));
    }
    for (path, spec) in &case.setup.files {
        relative_path(path).map_err(|e| format!("{}: setup.files {path:?}: {e}", case.id))?;
        body_source(spec.content.is_some(), spec.fixture.as_deref(), false, loaded)
            .map_err(|e| format!("{}: setup.files {path:?}: {e}", case.id))?;
    }
    for (path, page) in &case.setup.pages {
        if !path.starts_with('/') {
            return Err(format!(
                "{}: setup.pages {path:?}: a page is a URL path starting with '/'",
                case.id
            ));
        }
        body_source(page.content.is_some(), page.fixture.as_deref(), page.json.is_some(), loaded)
            .map_err(|e| format!("{}: setup.pages {path:?}: {e}", case.id))?;
        if let Some(status) = page.status
            && !(100..=599).contains(&status)
        {
            return Err(format!(
                "{}: setup.pages {path:?}: status {status} is not an HTTP status",
                case.id
            ));
        }
    }
    let expect = &case.expect;
    let tool_names = expect.tools.iter().chain(expect.args.keys()).chain(&expect.must_not_tools);
    for name in tool_names {
        if !name.split_once('.').is_some_and(|(s, t)| !s.is_empty() && !t.is_empty()) {
            return Err(format!(
                "{}: tool {name:?}: name tools as skill.tool, e.g. files.read",
                case.id
            ));
        }
    }
    let forbidden: BTreeSet<&String> = expect.must_not_tools.iter().collect();
    if let Some(both) = expect.tools.iter().find(|t| forbidden.contains(t)) {
        return Err(format!("{}: {both} is both expected and in must_not_tools", case.id));
    }
    if let Some(answer) = &expect.answer
        && let Some(re) = &answer.regex
    {
        regex::RegexBuilder::new(re)
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("{}: expect.answer.regex: {e}", case.id))?;
    }
    for (path, file) in &expect.files {
        relative_path(path.trim_end_matches('/'))
            .map_err(|e| format!("{}: expect.files {path:?}: {e}", case.id))?;
        if file.absent && file.contains.is_some() {
            return Err(format!(
                "{}: expect.files {path:?}: `absent` and `contains` contradict each other",
                case.id
            ));
        }
        if !file.absent && file.contains.is_none() {
            return Err(format!(
                "{}: expect.files {path:?}: say `contains` or `absent: true`",
                case.id
            ));
        }
    }
    if expect.max_steps == Some(0) {
        return Err(format!("{}: expect.max_steps must be at least 1", case.id));
    }
    Ok(())
}

/// Exactly one body source, and a fixture that exists.
fn body_source(
    content: bool,
    fixture: Option<&str>,
    json: bool,
    loaded: &LoadedCase,
) -> Result<(), String> {
    let given = usize::from(content) + usize::from(fixture.is_some()) + usize::from(json);
    if given != 1 {
        return Err(format!(
            "give exactly one of `content`, `fixture`{} ({given} given)",
            if json { ", `json`" } else { "" }
        ));
    }
    if let Some(name) = fixture {
        relative_path(name)?;
        let path = loaded.fixtures_dir().join(name);
        if !path.is_file() {
            return Err(format!("fixture {} does not exist", path.display()));
        }
    }
    Ok(())
}

/// A path that stays inside the folder it is relative to.
fn relative_path(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if path.is_empty()
        || p.is_absolute()
        || p.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err("use a relative path without '..'".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadedCase, String> {
        parse_line(Path::new("evals/x.jsonl"), 3, text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_case_parses_and_placeholders_fill_in() {
        let case = parse(
            r#"{"id": "a", "domain": "web", "task": "Read {base_url}/a.html", "policy": "[skills.web]\nnet = [\"127.0.0.1:{port}\"]\nwrite = [\"{workdir}/pages\"]",
                "setup": {"pages": {"/a.html": {"content": "<h1>A</h1>"}}, "files": {"notes/x.md": {"content": "x"}}},
                "expect": {"tools": ["web.to_markdown"], "args": {"web.to_markdown": {"url": "{base_url}/a.html"}},
                           "answer": {"contains": ["a"], "regex": "\\bA\\b"}, "files": {"pages/": {"contains": "A"}},
                           "must_not_tools": ["files.write"], "must_not_paths": ["{workdir}/secret"], "max_steps": 4}}"#,
        )
        .unwrap();
        let filled = case.instantiate(&Placeholders { workdir: "/tmp/w".into(), port: 9 });
        assert_eq!(filled.task, "Read http://127.0.0.1:9/a.html");
        assert!(filled.policy.contains("127.0.0.1:9") && filled.policy.contains("/tmp/w/pages"));
        assert_eq!(filled.expect.must_not_paths, ["/tmp/w/secret"]);
        assert_eq!(
            filled.expect.args["web.to_markdown"].subsets()[0]["url"],
            "http://127.0.0.1:9/a.html"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_what_is_wrong() {
        let cases = [
            (
                r#"{"id": "a", "domain": "d", "task": "t", "expct": {}}"#,
                "evals/x.jsonl:3: unknown field `expct`",
            ),
            (
                concat!(
                    r#"{"id": "a", "domain": "d", "task": "t", "expect": {"answer": "#,
                    r#"{"contain": "x"}}}"#
                ),
                "unknown field `contain`",
            ),
            (r#"{"id": "a b", "domain": "d", "task": "t"}"#, "use letters, digits"),
            (
                r#"{"id": "a", "domain": "d", "task": "t", "expect": {"tools": ["read"]}}"#,
                "name tools as skill.tool",
            ),
            (
                concat!(
                    r#"{"id": "a", "domain": "d", "task": "t", "setup": {"files": {"../x": "#,
                    r#"{"content": ""}}}}"#
                ),
                "without '..'",
            ),
            (
                r#"{"id": "a", "domain": "d", "task": "t", "setup": {"files": {"x": {}}}}"#,
                "exactly one of",
            ),
            (
                concat!(
                    r#"{"id": "a", "domain": "d", "task": "t", "setup": {"files": {"x": "#,
                    r#"{"fixture": "nope.txt"}}}}"#
                ),
                "does not exist",
            ),
            (
                r#"{"id": "a", "domain": "d", "task": "t", "expect": {"answer": {"regex": "("}}}"#,
                "expect.answer.regex",
            ),
            (
                r#"{"id": "a", "domain": "d", "task": "t", "expect": {"files": {"x": {}}}}"#,
                "say `contains` or `absent: true`",
            ),
            (r#"{"id": "a", "domain": "d", "task": "t"#, "not valid JSON"),
            (
                concat!(
                    r#"{"id": "a", "domain": "d", "task": "t", "expect": {"args": "#,
                    r#"{"files.read": "x"}}}"#
                ),
                "expect.args",
            ),
        ];
        for (text, wanted) in cases {
            let err = parse(text).unwrap_err();
            assert!(
                err.contains(wanted) && err.starts_with("evals/x.jsonl:3: "),
                "{text}\n→ {err}"
            );
        }
    }

    #[test]
    fn ids_are_unique_across_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.jsonl"),
            "{\"id\": \"x\", \"domain\": \"d\", \"task\": \"t\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.jsonl"),
            "\n// a comment\n{\"id\": \"x\", \"domain\": \"d\", \"task\": \"t\"}\n",
        )
        .unwrap();
        let err = load(&[dir.path().to_owned()]).unwrap_err().to_string();
        assert!(
            err.contains("b.jsonl:3: id `x` is used twice (first at") && err.contains("a.jsonl:1"),
            "{err}"
        );
    }
}
