//! Known-bad versions of wasmtime, cap-std and the host's network and storage
//! stack, checked against `Cargo.lock` offline: a locked version in a range
//! with a published advisory fails the suite, naming the crate, the version,
//! the advisory and the fixed releases. The list, and how to update it, is
//! `tests/advisories.toml`.

use semver::{Version, VersionReq};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// `tests/advisories.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct List {
    /// Crates released together: an advisory filed under the key is checked
    /// against every locked crate that matches one of the patterns.
    #[serde(default)]
    family: BTreeMap<String, Vec<String>>,
    advisory: Vec<Advisory>,
}

/// One advisory, with RustSec's meaning of `patched` and `unaffected`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Advisory {
    id: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(rename = "crate")]
    krate: String,
    date: String,
    title: String,
    patched: Vec<String>,
    #[serde(default)]
    unaffected: Vec<String>,
    #[serde(default)]
    note: Option<String>,
    source: String,
}

/// The part of `Cargo.lock` this needs.
#[derive(Debug, Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<Package>,
}

#[derive(Debug, Deserialize)]
struct Package {
    name: String,
    version: String,
}

impl List {
    fn load(text: &str) -> List {
        let list: List =
            toml::from_str(text).unwrap_or_else(|e| panic!("tests/advisories.toml: {e}"));
        for advisory in &list.advisory {
            assert!(
                !advisory.date.is_empty() && !advisory.source.is_empty(),
                "{}: give its date and source",
                advisory.id
            );
            for req in advisory.patched.iter().chain(&advisory.unaffected) {
                parse_req(advisory, req);
            }
        }
        list
    }

    /// The crates an advisory filed under `krate` applies to.
    fn patterns<'a>(&'a self, krate: &'a str) -> Vec<&'a str> {
        match self.family.get(krate) {
            Some(patterns) => patterns.iter().map(String::as_str).collect(),
            None => vec![krate],
        }
    }
}

fn parse_req(advisory: &Advisory, req: &str) -> VersionReq {
    VersionReq::parse(req).unwrap_or_else(|e| {
        panic!("tests/advisories.toml: {}: {req:?} is not a version requirement: {e}", advisory.id)
    })
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Each locked package in a range of an advisory, as a sentence that says
/// what to do about it.
fn findings(lock: &str, list: &List) -> Vec<String> {
    let lock: Lock = toml::from_str(lock).unwrap_or_else(|e| panic!("Cargo.lock: {e}"));
    let mut found = Vec::new();
    for advisory in &list.advisory {
        let patterns = list.patterns(&advisory.krate);
        let patched: Vec<VersionReq> =
            advisory.patched.iter().map(|r| parse_req(advisory, r)).collect();
        let unaffected: Vec<VersionReq> =
            advisory.unaffected.iter().map(|r| parse_req(advisory, r)).collect();
        for package in
            lock.package.iter().filter(|p| patterns.iter().any(|pattern| matches(pattern, &p.name)))
        {
            let version = Version::parse(&package.version).unwrap_or_else(|e| {
                panic!("Cargo.lock: {} {}: {e}", package.name, package.version)
            });
            if patched.iter().chain(&unaffected).any(|req| req.matches(&version)) {
                continue;
            }
            let aliases = if advisory.aliases.is_empty() {
                String::new()
            } else {
                format!(" ({})", advisory.aliases.join(", "))
            };
            let filed = if package.name == advisory.krate {
                String::new()
            } else {
                format!(", filed under {}, released with it", advisory.krate)
            };
            let note = advisory.note.as_deref().map(|n| format!(" [{n}]")).unwrap_or_default();
            let fixed = if advisory.patched.is_empty() {
                "no fixed release: replace the crate".to_owned()
            } else {
                format!("fixed in {}", advisory.patched.join(" or "))
            };
            found.push(format!(
                "{} {} (Cargo.lock) is affected by {}{aliases}{filed}: {}{note}; {fixed}. Raise \
                 it: the pin in Cargo.toml's [workspace.dependencies], or `cargo update -p {}@{}`",
                package.name,
                package.version,
                advisory.id,
                advisory.title,
                package.name,
                package.version
            ));
        }
    }
    found
}

fn workspace_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn list() -> List {
    List::load(&workspace_file("tests/advisories.toml"))
}

#[test]
fn no_locked_crate_is_in_a_range_with_a_known_advisory() {
    let found = findings(&workspace_file("Cargo.lock"), &list());
    assert!(
        found.is_empty(),
        "Cargo.lock holds versions with known advisories:\n- {}",
        found.join("\n- ")
    );
}

#[test]
fn a_locked_version_in_a_known_bad_range_is_caught_with_the_advisory_and_the_fix() {
    // The check must be able to fail: a lock with a downgraded wasmtime
    // (beside the current one), an older wasmtime-wasi-http and cap-std.
    let lock = r#"
version = 4

[[package]]
name = "wasmtime"
version = "48.0.8"

[[package]]
name = "wasmtime"
version = "43.0.0"

[[package]]
name = "wasmtime-wasi-http"
version = "47.0.2"

[[package]]
name = "wasmtime"
version = "36.0.13"

[[package]]
name = "cap-std"
version = "3.4.0"

[[package]]
name = "serde"
version = "1.0.0"
"#;
    let found = findings(lock, &list());
    let about =
        |start: &str| found.iter().filter(|f| f.starts_with(start)).cloned().collect::<Vec<_>>();
    let old = about("wasmtime 43.0.0 ");
    let escape = old
        .iter()
        .find(|f| f.contains("RUSTSEC-2026-0096"))
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        escape.contains("GHSA-jhxm-h53p-jm7w") && escape.contains("CVE-2026-34971"),
        "names the advisory: {escape}"
    );
    assert!(escape.contains("sandbox escape on aarch64"), "says what it is: {escape}");
    assert!(
        escape.contains("fixed in >= 36.0.7, < 37.0.0 or >= 42.0.2, < 43.0.0 or >= 43.0.1"),
        "says what fixes it: {escape}"
    );
    assert!(escape.contains("cargo update -p wasmtime@43.0.0"), "{escape}");
    let http = about("wasmtime-wasi-http 47.0.2 ");
    assert!(
        http.iter().any(|f| f.contains("RUSTSEC-2026-0222") && f.contains("filed under wasmtime")),
        "a crate of the wasmtime release: {found:#?}"
    );
    assert!(
        about("cap-std 3.4.0 ")
            .iter()
            .any(|f| f.contains("RUSTSEC-2024-0445") && f.contains("CVE-2024-51756")),
        "{found:#?}"
    );
    assert!(about("wasmtime 48.0.8 ").is_empty(), "the current release is patched: {found:#?}");
    assert!(
        about("wasmtime 36.0.13 ").is_empty(),
        "a patched backport branch counts as fixed: {found:#?}"
    );
    assert!(about("serde ").is_empty());
}

#[test]
fn every_crate_the_list_covers_is_in_the_lock() {
    // A renamed crate would leave its advisories checking nothing.
    let lock: Lock = toml::from_str(&workspace_file("Cargo.lock")).expect("Cargo.lock");
    let list = list();
    for krate in ["wasmtime", "wasmtime-wasi", "cranelift-codegen", "cap-primitives"] {
        assert!(
            list.advisory.iter().any(|a| a.krate == krate),
            "the list has no advisory for {krate}"
        );
    }
    for advisory in &list.advisory {
        let patterns = list.patterns(&advisory.krate);
        assert!(
            lock.package.iter().any(|p| patterns.iter().any(|pattern| matches(pattern, &p.name))),
            "{} is filed under {}, which Cargo.lock does not hold (renamed? then list \
             it under its new name)",
            advisory.id,
            advisory.krate
        );
    }
    // Fixes to these are filed under another crate of their release.
    for (krate, filed_under) in [
        ("wasmtime-wasi-http", "wasmtime"),
        ("wasmtime-environ", "wasmtime"),
        ("cap-std", "cap-primitives"),
    ] {
        assert!(
            list.patterns(filed_under).iter().any(|pattern| matches(pattern, krate)),
            "{krate} is not checked with {filed_under}"
        );
    }
}
