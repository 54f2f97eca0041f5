//! A skill in Rust: a crate depending on `agent-reach-sdk`, by version (as a user gets it from
//! crates.io) or by path (`--sdk-path`, for working inside the Agent Reach repository).

use super::{File, Template, fill};
use std::path::Path;

pub(super) fn files(name: &str, sdk_path: Option<&Path>) -> Template {
    // Cargo writes `-` in a crate name as `_` in the file it builds.
    let crate_name = name.replace('-', "_");
    let sdk = match sdk_path {
        // TOML basic strings: a Windows path's backslashes and any quote escaped.
        Some(path) => format!("{{ path = {} }}", toml_string(&path.display().to_string())),
        None => format!("\"{}\"", sdk_requirement()),
    };
    let values = [("NAME", name), ("CRATE", crate_name.as_str()), ("SDK", sdk.as_str())];
    let file =
        |path, template: &str, executable| File { path, text: fill(template, &values), executable };
    Template {
        files: vec![
            file("Cargo.toml", include_str!("rust/Cargo.toml.in"), false),
            file(".cargo/config.toml", include_str!("rust/config.toml.in"), false),
            file(".gitignore", include_str!("rust/gitignore.in"), false),
            file("src/lib.rs", include_str!("rust/lib.rs.in"), false),
            file("README.md", include_str!("rust/README.md.in"), false),
            file("test.sh", include_str!("rust/test.sh.in"), true),
        ],
        setup: None,
        build: "cargo build --release",
        built: format!("target/wasm32-wasip2/release/{crate_name}.wasm"),
    }
}

/// The SDK versions this `reach` can load skills of: its own major.minor (the contract's
/// minor version moves with it).
fn sdk_requirement() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.to_owned(),
    }
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}
