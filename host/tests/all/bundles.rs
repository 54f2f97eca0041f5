//! Our `SKILL.md` loader and the Agent Skills reference validator
//! (`skills-ref` from PyPI, installed by `scripts/guest-toolchains.sh`) agree
//! on a corpus of bundles (`tests/fixtures/bundles/CASE/FOLDER/`): each case
//! is named for the verdict both must give (`valid-…`, `invalid-…`), and the
//! `divergent-…` cases are where this host is stricter on purpose.

use agent_reach::bundle::{self, Severity};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every corpus bundle folder, by case name.
fn corpus() -> BTreeMap<String, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles");
    let mut cases = BTreeMap::new();
    for case in std::fs::read_dir(&root).expect("the corpus") {
        let case = case.unwrap().path();
        let mut folders: Vec<PathBuf> =
            std::fs::read_dir(&case).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(folders.len(), 1, "{} holds one bundle folder", case.display());
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        cases.insert(name, folders.pop().unwrap());
    }
    cases
}

/// The reference validator's errors for each folder, from one Python process.
fn reference(folders: &[&PathBuf]) -> BTreeMap<String, Vec<String>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = Command::new(repo.join("scripts/guest-toolchains.sh")).arg("bin").output().unwrap();
    let python = PathBuf::from(String::from_utf8(bin.stdout).unwrap().trim()).join("python");
    let script = "import json, sys\nfrom pathlib import Path\n\
                  from skills_ref.validator import validate\n\
                  print(json.dumps({p: validate(Path(p)) for p in sys.argv[1:]}))\n";
    let out =
        Command::new(&python).arg("-c").arg(script).args(folders).output().unwrap_or_else(|e| {
            panic!(
                "{}: {e}; install the reference validator with scripts/guest-toolchains.sh install",
                python.display()
            )
        });
    assert!(
        out.status.success(),
        "skills-ref failed (scripts/guest-toolchains.sh install?): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the reference's JSON")
}

#[test]
fn our_loader_and_the_reference_validator_agree_on_the_corpus() {
    let cases = corpus();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let folders: Vec<&PathBuf> = cases.values().collect();
    let reference = reference(&folders);
    let mut disagree = Vec::new();
    for (case, folder) in &cases {
        let theirs = &reference[&folder.display().to_string()];
        let ours = match bundle::load(folder) {
            Ok(b) => b.problems.iter().map(|p| p.message.clone()).collect(),
            Err(e) => e.problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>(),
        };
        let expected_valid = case.starts_with("valid-");
        let reference_valid = theirs.is_empty();
        if case.starts_with("divergent-") {
            // A name with letters outside a–z: valid there, refused here
            // (it is the prefix of tool names, which model APIs keep ASCII).
            assert!(reference_valid, "{case}: the reference changed: {theirs:?}");
            assert!(!ours.is_empty(), "{case}: we should refuse it");
            continue;
        }
        if reference_valid != expected_valid || ours.is_empty() != expected_valid {
            disagree.push(format!("{case}: reference {theirs:?}, ours {ours:?}"));
        }
    }
    assert!(disagree.is_empty(), "disagreements:\n{}", disagree.join("\n"));
}

#[test]
fn the_shipped_bundles_pass_the_reference_validator_and_ours_without_a_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills-src/bundles");
    let folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert!(folders.len() >= 2, "{folders:?}");
    let reference = reference(&folders.iter().collect::<Vec<_>>());
    for folder in &folders {
        assert_eq!(
            reference[&folder.display().to_string()],
            Vec::<String>::new(),
            "{}",
            folder.display()
        );
        let b = bundle::load(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        assert!(b.problems.is_empty(), "{}: {:?}", folder.display(), b.problems);
    }
}

#[test]
fn lenient_where_the_client_guidance_says_strict_where_a_skill_cannot_work() {
    let cases = corpus();
    let loads = |case: &str| match bundle::load(&cases[case]) {
        Ok(b) => {
            assert!(b.problems.iter().all(|p| p.severity == Severity::Warning), "{case}");
            true
        }
        Err(_) => false,
    };
    // Warn and load: the skill still works, under its folder's name.
    for case in [
        "invalid-name-not-folder",
        "invalid-missing-name",
        "invalid-unexpected-field",
        "invalid-description-too-long",
        "invalid-compatibility-too-long",
    ] {
        assert!(loads(case), "{case} should load with a warning");
    }
    // Broken: no description, YAML that does not parse, a folder name that
    // cannot be a skill's name.
    for case in [
        "invalid-missing-description",
        "invalid-empty-description",
        "invalid-unquoted-colon",
        "invalid-flow-list",
        "invalid-duplicate-key",
        "invalid-no-frontmatter",
        "invalid-unclosed-frontmatter",
        "invalid-anchor",
        "invalid-uppercase-name",
        "invalid-consecutive-hyphens",
        "invalid-leading-hyphen",
        "invalid-underscore",
        "invalid-name-too-long",
        "divergent-non-ascii-name",
    ] {
        assert!(!loads(case), "{case} should be broken");
    }
    let b = bundle::load(&cases["invalid-name-not-folder"]).unwrap();
    assert_eq!(b.name, "folder-one", "named after its folder, not its frontmatter");
}

/// Copy a corpus bundle into `skills`.
fn install(skills: &Path, case: &str) -> PathBuf {
    let from = &corpus()[case];
    let to = skills.join(from.file_name().unwrap());
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap().path();
        if entry.is_file() {
            std::fs::copy(&entry, to.join(entry.file_name().unwrap())).unwrap();
        }
    }
    to
}

#[test]
fn reach_skills_list_shows_bundles_and_a_pin_covers_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    let triage = install(&skills, "valid-folded-description");
    install(&skills, "invalid-missing-description");
    let list = |table: &str| {
        std::fs::write(dir.path().join("reach.toml"), table).unwrap();
        let out = crate::support::isolated(env!("CARGO_BIN_EXE_reach"), dir.path())
            .args(["skills", "list", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["skills"].as_array().unwrap().clone();
        rows.into_iter()
            .map(|r| (r["name"].as_str().unwrap().to_owned(), r))
            .collect::<BTreeMap<_, _>>()
    };
    let rows = list("");
    let review = &rows["code-review"];
    assert_eq!(review["kind"], "bundle");
    assert_eq!(review["status"], "active");
    assert!(review["description"].as_str().unwrap().starts_with("Review a change"));
    let digest = review["sha256"].as_str().unwrap().to_owned();
    let broken = &rows["no-desc"];
    assert_eq!(broken["status"], "broken");
    assert!(broken["reason"].as_str().unwrap().contains("no `description`"), "{broken}");

    // Pinned: loads while every file is as pinned, refused once one changes.
    let pinned = format!("[skills.code-review]\nsha256 = \"{digest}\"\n");
    assert_eq!(list(&pinned)["code-review"]["status"], "active");
    std::fs::write(triage.join("notes.txt"), "added later\n").unwrap();
    let row = &list(&pinned)["code-review"];
    assert_eq!(row["status"], "broken", "{row}");
    let reason = row["reason"].as_str().unwrap();
    assert!(reason.contains(&digest) && reason.contains("a file in it changed"), "{reason}");
}

/// `reach` in `dir` with these arguments: (success, stdout, stderr).
fn reach_in(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out =
        crate::support::isolated(env!("CARGO_BIN_EXE_reach"), dir).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_project_bundle_loads_only_when_the_table_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    // What a cloned repository brings: other clients would load it on sight.
    let project = dir.path().join(".agents/skills");
    std::fs::create_dir_all(&project).unwrap();
    let review = install(&project, "valid-folded-description");
    assert_eq!(review.file_name().unwrap(), "code-review");
    let names = |table: &str| -> BTreeMap<String, serde_json::Value> {
        std::fs::write(dir.path().join("reach.toml"), table).unwrap();
        let (ok, out, err) = reach_in(dir.path(), &["skills", "list", "--json"]);
        assert!(ok, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["name"].as_str().unwrap().to_owned(), r.clone()))
            .collect()
    };
    assert!(names("").is_empty(), "a project folder is never scanned");
    assert!(names("[skills.code-review]\nlevel = \"auto\"\n").is_empty(), "granting is not naming");

    let rows = names("[skills.code-review]\nbundle = \".agents/skills/code-review\"\n");
    let row = &rows["code-review"];
    assert_eq!(row["status"], "active", "{row}");
    assert_eq!(row["path"].as_str().unwrap(), review.to_str().unwrap());
    assert_eq!(rows.len(), 1, "only the bundle named: {rows:?}");

    // Named but missing, or there in the skills folder as well: broken, with the reason.
    let rows = names("[skills.code-review]\nbundle = \"elsewhere/code-review\"\n");
    let reason = rows["code-review"]["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("there is no folder there") && reason.contains("line 2"), "{reason}");
    install(&dir.path().join("skills"), "valid-folded-description");
    let (ok, out, err) = reach_in(dir.path(), &["skills", "list", "--json"]);
    assert!(ok, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = listed["skills"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // The skills folder's copy serves; the named one says why it does not.
    assert_eq!(rows[0]["status"], "active", "{rows:?}");
    assert!(rows[0]["path"].as_str().unwrap().ends_with("skills/code-review"), "{rows:?}");
    assert_eq!(rows[1]["status"], "broken", "{rows:?}");
    assert!(rows[1]["reason"].as_str().unwrap().contains("in the skills folder too"), "{rows:?}");
}

#[test]
fn the_table_binds_a_project_bundle_to_its_name_and_no_skill_may_write_it() {
    let dir = tempfile::tempdir().unwrap();
    let table = |text: &str| {
        std::fs::write(dir.path().join("reach.toml"), text).unwrap();
        reach_in(dir.path(), &["policy", "check"])
    };
    let (ok, _, err) = table("[skills.code-review]\nbundle = \".agents/skills/other\"\n");
    assert!(!ok);
    assert!(
        err.contains("skills.code-review.bundle") && err.contains("is not named code-review"),
        "{err}"
    );

    std::fs::create_dir_all(dir.path().join(".agents/skills/code-review")).unwrap();
    let (ok, _, err) = table(
        "[skills.code-review]\nbundle = \".agents/skills/code-review\"\n\n\
         [skills.files]\nwrite = [\".agents\"]\n",
    );
    assert!(!ok, "a skill could rewrite the bundle's instructions");
    assert!(
        err.contains("the bundle code-review") && err.contains("skills.files.write[0]"),
        "{err}"
    );
}
