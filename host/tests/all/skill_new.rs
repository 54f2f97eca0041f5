//! `reach skill new`: the folder it writes builds outside this repository against the SDK as
//! `cargo package` makes it, and its own test loads the component with `reach` and calls it.

use crate::support::isolated;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace this test was built from.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

fn reach(dir: &Path, args: &[&str]) -> Output {
    isolated(env!("CARGO_BIN_EXE_reach"), dir).args(args).output().expect("run reach")
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every file under `dir`, with its text.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path.strip_prefix(dir).unwrap().to_owned(), text));
            }
        }
    }
    found.sort();
    found
}

/// `cargo package -p agent-reach-sdk`, unpacked into `into`: the crate as crates.io would
/// serve it.
fn packaged_sdk(into: &Path) -> PathBuf {
    let target = workspace().join("target/skill-new");
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .args(["package", "-p", "agent-reach-sdk", "--no-verify", "--allow-dirty", "--quiet"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo package: {}", text(&out));
    let version = env!("CARGO_PKG_VERSION");
    let file = target.join(format!("package/agent-reach-sdk-{version}.crate"));
    let out = Command::new("tar").arg("xzf").arg(&file).arg("-C").arg(into).output().unwrap();
    assert!(out.status.success(), "tar: {}", text(&out));
    into.join(format!("agent-reach-sdk-{version}"))
}

#[test]
fn a_new_rust_skill_builds_against_the_packaged_sdk_and_answers_a_call() {
    let tmp = tempfile::tempdir().unwrap();
    let sdk = packaged_sdk(tmp.path());
    assert!(
        std::fs::symlink_metadata(sdk.join("wit/skill.wit")).unwrap().is_file(),
        "the WIT contract travels inside the package as a file"
    );
    let out = reach(tmp.path(), &["skill", "new", "hello-world"]);
    assert!(out.status.success(), "{}", text(&out));
    let skill = tmp.path().join("hello-world");
    let written = files(&skill);
    let names: Vec<String> = written.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(
        names,
        [".cargo/config.toml", ".gitignore", "Cargo.toml", "README.md", "src/lib.rs", "test.sh"]
    );
    let root = workspace().display().to_string();
    for (path, text) in &written {
        assert!(!text.contains(&root), "{} names this repository: {text}", path.display());
    }
    let manifest = &written[2].1;
    let requirement = format!("agent-reach-sdk = \"{}\"", &env!("CARGO_PKG_VERSION")[..3]);
    assert!(manifest.contains(&requirement), "the SDK by version:\n{manifest}");
    // What `cargo add` from crates.io would give, pointed at the packaged crate.
    let patch = format!(
        "\n[patch.crates-io]\nagent-reach-sdk = {{ path = {:?} }}\n",
        sdk.display().to_string()
    );
    std::fs::write(skill.join("Cargo.toml"), format!("{manifest}{patch}")).unwrap();
    passes_its_own_test(&skill, "hello-world");
}

#[test]
fn sdk_path_names_the_sdk_by_path_and_a_folder_that_is_not_it_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sdk = workspace().join("sdk");
    let out = reach(tmp.path(), &["skill", "new", "weather", "--sdk-path", sdk.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let manifest = std::fs::read_to_string(tmp.path().join("weather/Cargo.toml")).unwrap();
    assert!(
        manifest
            .contains(&format!("agent-reach-sdk = {{ path = {:?} }}", sdk.display().to_string())),
        "{manifest}"
    );

    let out =
        reach(tmp.path(), &["skill", "new", "other", "--sdk-path", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not the agent-reach-sdk crate"), "{}", text(&out));
    assert!(!tmp.path().join("other").exists(), "nothing is written");
}

#[test]
fn an_invalid_name_or_an_existing_folder_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = reach(tmp.path(), &["skill", "new", "Bad Name"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("[a-z][a-z0-9_-]*"), "{}", text(&out));
    std::fs::create_dir(tmp.path().join("taken")).unwrap();
    let out = reach(tmp.path(), &["skill", "new", "taken"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("already exists"), "{}", text(&out));
    assert_eq!(std::fs::read_dir(tmp.path().join("taken")).unwrap().count(), 0);
}

/// PATH with the pinned guest toolchains first (`scripts/guest-toolchains.sh install`).
fn path_with_guest_tools() -> String {
    let out = Command::new(workspace().join("scripts/guest-toolchains.sh"))
        .arg("bin")
        .output()
        .expect("scripts/guest-toolchains.sh");
    let bin = String::from_utf8(out.stdout).unwrap();
    format!("{}:{}", bin.trim(), std::env::var("PATH").unwrap_or_default())
}

/// The skill folder's own `test.sh`, with this build's `reach` and the pinned guest
/// toolchains, passes.
fn passes_its_own_test(skill: &Path, name: &str) {
    let out = Command::new("sh")
        .arg("test.sh")
        .current_dir(skill)
        .env("REACH", env!("CARGO_BIN_EXE_reach"))
        .env("PATH", path_with_guest_tools())
        // Shared between runs, so a Rust skill's dependencies build once.
        .env("CARGO_TARGET_DIR", workspace().join("target/skill-new/build"))
        .env("REACH_CACHE_DIR", workspace().join("target/test-compile-cache"))
        .env_remove("REACH_POLICY")
        .env_remove("REACH_SKILLS")
        .output()
        .unwrap();
    assert!(out.status.success(), "test.sh: {}", text(&out));
    let expected = format!("ok: {name}.greet answered \"Hello, Ada!\"");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&expected), "{}", text(&out));
}

/// `reach skill new NAME --lang LANG` in `dir`, then the folder's own `test.sh`.
fn new_skill_passes_its_own_test(lang: &str, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = reach(tmp.path(), &["skill", "new", name, "--lang", lang]);
    assert!(out.status.success(), "{}", text(&out));
    let skill = tmp.path().join(name);
    let root = workspace().display().to_string();
    for (path, text) in files(&skill) {
        assert!(!text.contains(&root), "{} names this repository: {text}", path.display());
    }
    passes_its_own_test(&skill, name);
}

#[test]
fn a_new_python_skill_builds_with_componentize_py_and_answers_a_call() {
    new_skill_passes_its_own_test("python", "hello-py");
}

#[test]
fn a_new_javascript_skill_builds_with_componentize_js_and_answers_a_call() {
    new_skill_passes_its_own_test("js", "hello-js");
}
