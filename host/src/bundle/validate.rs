//! The Agent Skills specification's rules for `SKILL.md` frontmatter, as its
//! reference validator (`skills-ref`) applies them, each with the severity
//! this host gives it.
//!
//! The specification is strict; its client guidance says to be lenient
//! where a skill can still work. So every rule the reference checks is a
//! [`Problem`] here (a bundle with none is valid exactly when the reference
//! says so), and each problem is either [`Severity::Broken`] — the skill
//! cannot work: no description, unusable YAML, a folder name that cannot
//! be a skill's name — or [`Severity::Warning`]: reported, and the bundle
//! loads under its folder's name.

use super::frontmatter::Node;
use crate::policy::RESERVED_SKILL_NAMES;
use std::collections::BTreeMap;

/// The frontmatter keys the specification defines.
pub const FIELDS: [&str; 6] =
    ["name", "description", "license", "allowed-tools", "metadata", "compatibility"];
/// Longest `name`, in characters.
pub const MAX_NAME: usize = 64;
/// Longest `description`, in characters.
pub const MAX_DESCRIPTION: usize = 1024;
/// Longest `compatibility`, in characters.
pub const MAX_COMPATIBILITY: usize = 500;

/// How much a problem matters to this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Reported; the bundle loads.
    Warning,
    /// The bundle cannot work: it is isolated and reported like a broken `.wasm`.
    Broken,
}

/// One way a bundle breaks the specification.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// Warning or broken.
    pub severity: Severity,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Problem {
    fn warn(message: String) -> Self {
        Problem { severity: Severity::Warning, message }
    }

    fn broken(message: String) -> Self {
        Problem { severity: Severity::Broken, message }
    }
}

/// Check `fields` (the parsed frontmatter) of the bundle in folder
/// `folder`, in the order the reference reports.
pub fn check(fields: &BTreeMap<String, Node>, folder: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let extra: Vec<&str> =
        fields.keys().map(String::as_str).filter(|k| !FIELDS.contains(k)).collect();
    if !extra.is_empty() {
        problems.push(Problem::warn(format!(
            "unexpected frontmatter fields: {}; the specification allows only {} (put anything \
             else under `metadata:`)",
            extra.join(", "),
            FIELDS.join(", ")
        )));
    }
    match fields.get("name").map(Node::as_text) {
        None => problems.push(Problem::warn(format!(
            "the frontmatter has no `name`; add `name: {folder}` (it must be the folder's name)"
        ))),
        Some(None) => problems.push(Problem::warn("`name` must be a plain text value".into())),
        Some(Some(name)) => problems.extend(name_rules(name.trim(), "name").map(Problem::warn)),
    }
    if let Some(Some(name)) = fields.get("name").map(Node::as_text)
        && !name.trim().is_empty()
        && name.trim() != folder
    {
        problems.push(Problem::warn(format!(
            "the frontmatter says `name: {}` but the folder is `{folder}`: the specification \
             requires them to be equal; this host names the skill after its folder (the name the \
             table grants)",
            name.trim()
        )));
    }
    match fields.get("description").map(Node::as_text) {
        None => problems.push(Problem::broken(
            "the frontmatter has no `description`: without one a model cannot know when to use \
             the skill; add `description: what it does and when to use it`"
                .into(),
        )),
        Some(Some(d)) if !d.trim().is_empty() => {
            let n = d.chars().count();
            if n > MAX_DESCRIPTION {
                problems.push(Problem::warn(format!(
                    "`description` is {n} characters; the specification allows at most \
                     {MAX_DESCRIPTION}"
                )));
            }
        }
        Some(_) => problems.push(Problem::broken(
            "`description` is empty (or not plain text): without one a model cannot know when to \
             use the skill"
                .into(),
        )),
    }
    if let Some(c) = fields.get("compatibility") {
        match c.as_text() {
            None => problems.push(Problem::warn("`compatibility` must be plain text".into())),
            Some(c) if c.chars().count() > MAX_COMPATIBILITY => {
                problems.push(Problem::warn(format!(
                    "`compatibility` is {} characters; the specification allows at most \
                     {MAX_COMPATIBILITY}",
                    c.chars().count()
                )))
            }
            Some(_) => {}
        }
    }
    problems
}

/// What is wrong with a skill name under the specification's rules (the
/// reference's messages, reworded), `what` naming where it comes from.
pub fn name_rules(name: &str, what: &str) -> impl Iterator<Item = String> {
    let mut out = Vec::new();
    let n = name.chars().count();
    if name.is_empty() {
        out.push(format!("`{what}` is empty"));
    }
    if n > MAX_NAME {
        out.push(format!("{what} `{name}` is {n} characters; at most {MAX_NAME} are allowed"));
    }
    if name != name.to_lowercase() {
        out.push(format!("{what} `{name}` must be lowercase"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(format!("{what} `{name}` must not start or end with a hyphen"));
    }
    if name.contains("--") {
        out.push(format!("{what} `{name}` must not contain two hyphens in a row"));
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '-') {
        out.push(format!("{what} `{name}` may hold only letters, digits and hyphens"));
    }
    out.into_iter()
}

/// Why a folder name cannot be a skill's name here, or `None`. Stricter
/// than the specification in one way, said in the message: letters are
/// ASCII only, because the name is also the table's key and the prefix of
/// every tool name a model API sees.
pub fn folder_name(folder: &str) -> Option<String> {
    let mut why: Vec<String> = name_rules(folder, "the folder name").collect();
    if why.is_empty()
        && !folder.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        why.push(format!(
            "the folder name `{folder}` has letters outside a–z: the specification allows them, \
             but a skill's name is also its tools' name prefix, which model APIs keep to ASCII"
        ));
    }
    if RESERVED_SKILL_NAMES.contains(&folder) {
        why.push(format!(
            "`{folder}` is reserved for the harness's built-in tools; rename the folder (and \
             `name:`)"
        ));
    }
    (!why.is_empty()).then(|| format!("{}; rename the folder", why.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, Node> {
        pairs.iter().map(|(k, v)| (k.to_string(), Node::Text(v.to_string()))).collect()
    }

    fn severities(problems: &[Problem]) -> Vec<Severity> {
        problems.iter().map(|p| p.severity).collect()
    }

    #[test]
    fn a_valid_frontmatter_has_no_problem() {
        assert!(
            check(&map(&[("name", "pdf-tools"), ("description", "PDFs.")]), "pdf-tools").is_empty()
        );
    }

    #[test]
    fn no_description_is_broken_the_rest_warns() {
        let p = check(&map(&[("name", "a")]), "a");
        assert_eq!(severities(&p), [Severity::Broken]);
        let p = check(&map(&[("name", "b"), ("description", " "), ("x", "1")]), "a");
        assert_eq!(severities(&p), [Severity::Warning, Severity::Warning, Severity::Broken]);
        let long = "d".repeat(MAX_DESCRIPTION + 1);
        let p = check(&map(&[("name", "Bad--"), ("description", &long)]), "a");
        assert!(p.iter().all(|p| p.severity == Severity::Warning), "{p:?}");
        assert!(p.iter().any(|p| p.message.contains("1025 characters")), "{p:?}");
    }

    #[test]
    fn folder_names_follow_the_rules_in_ascii() {
        assert_eq!(folder_name("incident-triage"), None);
        assert_eq!(folder_name("3d-print"), None);
        for bad in ["Triage", "-a", "a-", "a--b", "a_b", "café", "skills", ""] {
            assert!(folder_name(bad).is_some(), "{bad}");
        }
    }
}
