//! Generates `guests.rs`: one constant per skill component the tests can run,
//! from the lists in the justfile (`bundled_skills`, `test_only_skills` and their
//! `_interpreted_` twins), the one place that says which guests exist. A test naming a guest that is not
//! listed there does not compile.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let justfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../justfile");
    println!("cargo::rerun-if-changed={}", justfile.display());
    let text = std::fs::read_to_string(&justfile)
        .unwrap_or_else(|e| panic!("{}: {e}", justfile.display()));
    let mut out = String::new();
    let mut all = Vec::new();
    for (variable, kind) in [
        ("bundled_skills", "bundled (`just skills`)"),
        ("bundled_interpreted_skills", "bundled (`just skills`), in Python or JavaScript"),
        ("test_only_skills", "for the tests only"),
        ("test_only_interpreted_skills", "for the tests only, in Python or JavaScript"),
    ] {
        for krate in crates(&text, variable) {
            let constant = krate.replace('-', "_").to_ascii_uppercase();
            let skill = krate
                .strip_prefix("test-skill-")
                .or_else(|| krate.strip_prefix("skill-"))
                .unwrap_or_else(|| panic!("{krate}: a guest crate is `skill-*` or `test-skill-*`"))
                .replace('-', "_");
            writeln!(
                out,
                "/// The `{skill}` skill, crate `{krate}`, {kind}.\n\
                 pub const {constant}: Guest = Guest {{ krate: \"{krate}\", skill: \"{skill}\" }};"
            )
            .expect("write to a string");
            all.push(constant);
        }
    }
    // Runners are installed as `runners/NAME.wasm`, never as skills: not in `ALL`.
    for krate in crates(&text, "runners") {
        let constant = krate.replace('-', "_").to_ascii_uppercase();
        let name = krate
            .strip_prefix("runner-")
            .unwrap_or_else(|| panic!("{krate}: a runner is `runner-*`"));
        writeln!(
            out,
            "/// The `{name}` script runner, built from skills-src/runners/{name}: install it as \
             `runners/{name}.wasm`.\n\
             pub const {constant}: Guest = Guest {{ krate: \"{krate}\", skill: \"{name}\" }};"
        )
        .expect("write to a string");
    }
    writeln!(
        out,
        "/// Every guest, bundled first.\npub const ALL: &[Guest] = &[{}];",
        all.join(", ")
    )
    .expect("write to a string");
    let generated = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("guests.rs");
    std::fs::write(&generated, out).unwrap_or_else(|e| panic!("{}: {e}", generated.display()));
}

/// The crate names in the justfile's `variable := "a b c"` line.
fn crates<'a>(justfile: &'a str, variable: &str) -> Vec<&'a str> {
    let line = justfile
        .lines()
        .find_map(|line| line.strip_prefix(variable)?.trim_start().strip_prefix(":="))
        .unwrap_or_else(|| panic!("the justfile has no `{variable} := \"…\"` line"));
    let list = line.trim().strip_prefix('"').and_then(|l| l.strip_suffix('"'));
    let list = list.unwrap_or_else(|| panic!("justfile `{variable}`: one quoted list of crates"));
    list.split_whitespace().collect()
}
