//! `reach skill new NAME`: a skill folder that builds to `NAME.wasm` with one command, outside
//! this repository, with a README and a test that loads it with `reach` and calls it.

mod js;
mod python;
mod rust;

use crate::args::Lang;
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `reach skill new` was asked for.
pub struct NewSkill<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// The folder the skill's folder goes in.
    pub parent: Option<&'a Path>,
    /// The language it is written in.
    pub lang: Lang,
    /// Use the Rust SDK from this folder instead of by version.
    pub sdk_path: Option<&'a Path>,
}

/// One file of a new skill: its path in the skill's folder and its text.
struct File {
    path: &'static str,
    text: String,
    executable: bool,
}

/// A template's text with its `@KEY@` markers replaced.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_owned(), |text, (key, value)| text.replace(&format!("@{key}@"), value))
}

pub fn run(request: NewSkill<'_>) -> anyhow::Result<ExitCode> {
    let name = request.name;
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        bail!("skill name {name:?} is invalid: use [a-z][a-z0-9_-]* (for example: weather)");
    }
    let dir = request.parent.unwrap_or(Path::new(".")).join(name);
    if dir.exists() {
        bail!("{} already exists; choose another name or --dir", dir.display());
    }
    if request.sdk_path.is_some() && request.lang != Lang::Rust {
        bail!("--sdk-path names the Rust SDK; the {:?} SDK is copied into the skill", request.lang);
    }
    let template = match request.lang {
        Lang::Rust => rust::files(name, request.sdk_path.map(sdk_folder).transpose()?.as_deref()),
        Lang::Python => python::files(name),
        Lang::Js => js::files(name),
    };
    write_all(&dir, &template.files)?;
    println!("created {}", dir.display());
    if let Some(setup) = template.setup {
        println!("set up:     cd {} && {setup}", dir.display());
    }
    println!("build it:   cd {} && {}", dir.display(), template.build);
    println!("install it: cp {} <your skills folder>/{name}.wasm", template.built);
    println!("test it:    ./test.sh (builds, loads it with reach, calls it)");
    Ok(ExitCode::SUCCESS)
}

/// The SDK crate's folder, absolute, checked to be one.
fn sdk_folder(path: &Path) -> anyhow::Result<PathBuf> {
    let folder = std::fs::canonicalize(path)
        .with_context(|| format!("--sdk-path {}: no such folder", path.display()))?;
    let manifest = std::fs::read_to_string(folder.join("Cargo.toml")).unwrap_or_default();
    if !manifest.contains("name = \"agent-reach-sdk\"") {
        bail!(
            "--sdk-path {}: not the agent-reach-sdk crate (its Cargo.toml is `sdk/Cargo.toml` \
             in the Agent Reach repository)",
            path.display()
        );
    }
    Ok(folder)
}

/// Writes every file, or nothing: a half-written folder is removed.
fn write_all(dir: &Path, files: &[File]) -> anyhow::Result<()> {
    let written = files.iter().try_for_each(|file| write_one(dir, file));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(dir);
    }
    written
}

fn write_one(dir: &Path, file: &File) -> anyhow::Result<()> {
    let path = dir.join(file.path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, &file.text).with_context(|| format!("writing {}", path.display()))?;
    if file.executable {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// A language's files and how to build them.
struct Template {
    files: Vec<File>,
    /// What to install once before the first build, if anything.
    setup: Option<&'static str>,
    /// The one command that builds it, run in its folder.
    build: &'static str,
    /// Where the component is once built, relative to the folder.
    built: String,
}
