//! `reach skill new NAME`: a skill crate that builds to a .wasm with one command.

use anyhow::{Context as _, bail};
use std::path::Path;
use std::process::ExitCode;

/// Where this `reach` was built from, so the new crate can use the SDK by path.
const SDK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk");

pub fn run(name: &str, parent: Option<&Path>) -> anyhow::Result<ExitCode> {
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        bail!("skill name {name:?} is invalid: use [a-z][a-z0-9_-]* (for example: weather)");
    }
    let dir = parent.unwrap_or(Path::new(".")).join(name);
    if dir.exists() {
        bail!("{} already exists; choose another name or --dir", dir.display());
    }
    let sdk = std::fs::canonicalize(SDK_DIR).unwrap_or_else(|_| SDK_DIR.into());
    let crate_name = name.replace('-', "_");
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    std::fs::create_dir_all(dir.join(".cargo"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
agent-reach-sdk = {{ path = "{sdk}" }}
schemars = "1.2"
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[profile.release]
strip = "debuginfo"

# A standalone crate, not part of any enclosing workspace.
[workspace]
"#,
            sdk = sdk.display()
        ),
    )?;
    std::fs::write(dir.join(".cargo/config.toml"), "[build]\ntarget = \"wasm32-wasip2\"\n")?;
    std::fs::write(
        dir.join("src/lib.rs"),
        format!(
            r#"//! The `{name}` skill.

use agent_reach_sdk::prelude::*;

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Greet {{
    /// Who to greet.
    name: String,
}}

struct Skill_;

impl Skill for Skill_ {{
    fn define() -> Definition {{
        Definition::new("{name}", env!("CARGO_PKG_VERSION"), "Greets people by name. Use it when asked to greet someone.")
            .tool("greet", "Return a greeting for `name`.", |args: Greet| Ok(format!("Hello, {{}}!", args.name)))
            .example("Greet Ada", serde_json::json!({{"name": "Ada"}}), Some("Hello, Ada!"))
    }}
}}

export_skill!(Skill_);
"#
        ),
    )?;
    println!("created {}", dir.display());
    println!("build it:   cd {} && cargo build --release", dir.display());
    // The file must be named after the skill (the registry refuses others),
    // and cargo writes `-` in a crate name as `_`.
    println!(
        "install it: cp target/wasm32-wasip2/release/{crate_name}.wasm \
         <your skills folder>/{name}.wasm"
    );
    Ok(ExitCode::SUCCESS)
}
