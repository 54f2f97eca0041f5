//! `reach skill publish | add | sign | update` against a real Distribution
//! registry on 127.0.0.1: a publisher's folder and an operator's folder
//! (two "machines"), every refusal with nothing installed.

use crate::support::isolated;
use crate::support::registry::{TestRegistry, free_port, wasm_files};
use agent_reach_tests::{echo_variant, guests};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `reach ARGS` in `dir` with a signing password and no Docker config of
/// the developer's.
pub(crate) fn reach(dir: &Path, args: &[&str]) -> Output {
    isolated(env!("CARGO_BIN_EXE_reach"), dir)
        .args(args)
        .env("REACH_SIGNING_PASSWORD", "correct horse")
        .env("DOCKER_CONFIG", dir.join(".docker"))
        .env_remove("REACH_REGISTRY_USERNAME")
        .env_remove("REACH_REGISTRY_PASSWORD")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run reach")
}

pub(crate) fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

pub(crate) fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap_or_else(|e| panic!("JSON ({e}): {out:?}"))
}

pub(crate) fn failed(out: &Output) -> String {
    assert_ne!(out.status.code(), Some(0), "expected a refusal: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A publisher's folder with a key pair and `echo` components.
pub(crate) struct Publisher {
    dir: tempfile::TempDir,
}

impl Publisher {
    pub(crate) fn new(key: &str) -> Publisher {
        let p = Publisher { dir: tempfile::tempdir().expect("dir") };
        let out = reach(p.path(), &["skill", "keygen", "--out", key, "--json"]);
        json(&out);
        p
    }
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
    /// `echo` at `version`, written to the publisher's folder.
    fn echo(&self, version: &str) -> PathBuf {
        let file = self.path().join(format!("echo-{version}.wasm"));
        let bytes = if version == "1.0.0" {
            guests::TEST_SKILL_ECHO.bytes()
        } else {
            echo_variant("echo", version)
        };
        std::fs::write(&file, bytes).expect("write");
        file
    }
    pub(crate) fn key(&self, name: &str, ext: &str) -> String {
        self.path().join(format!("{name}.{ext}")).display().to_string()
    }
    pub(crate) fn publish(&self, version: &str, reference: &str, sign: Option<&str>) -> Value {
        let file = self.echo(version);
        let mut args = vec!["skill", "publish", file.to_str().unwrap(), reference, "--json"];
        let key = sign.map(|k| self.key(k, "key"));
        if let Some(k) = &key {
            args.extend(["--sign", k]);
        }
        json(&reach(self.path(), &args))
    }
}

/// `reach skill add REPO:1.0.0 --key` the publisher's `acme.pub`, in `dir`.
fn add_signed(dir: &Path, repo: &str, publisher: &Publisher) -> Value {
    let reference = format!("{repo}:1.0.0");
    let key = publisher.key("acme", "pub");
    json(&reach(dir, &["skill", "add", &reference, "--key", &key, "--json"]))
}

/// A registry with `echo` 1.0.0 published and signed by `acme`, and an
/// operator's folder that added it with the key.
struct Added {
    registry: TestRegistry,
    publisher: Publisher,
    repo: String,
    op: tempfile::TempDir,
    added: Value,
}

fn published_and_added() -> Added {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let repo = registry.url("skills/echo");
    publisher.publish("1.0.0", &repo, Some("acme"));
    let op = operator("");
    let added = add_signed(op.path(), &repo, &publisher);
    Added { registry, publisher, repo, op, added }
}

/// An operator's folder: its own skills folder and table.
pub(crate) fn operator(table: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("reach.toml"), table).expect("table");
    dir
}

fn sha256_file(path: &Path) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).expect("read")))
}

#[test]
fn a_skill_published_and_signed_is_added_elsewhere_with_pin_and_signature() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let repo = registry.url("skills/echo");
    let pushed = publisher.publish("1.0.0", &repo, Some("acme"));
    // No tag given: the skill's version is the tag; the digest is the manifest's.
    let reference = pushed["reference"].as_str().expect("reference");
    assert!(reference.starts_with(&format!("{repo}:1.0.0@sha256:")), "{pushed:#}");
    let fingerprint = pushed["signature"]["signer"].as_str().expect("signed").to_owned();

    let op = operator("[skills.files]\nlevel = \"auto\"\n");
    let key = publisher.key("acme", "pub");
    let out =
        reach(op.path(), &["skill", "add", &format!("{repo}:1.0.0"), "--key", &key, "--json"]);
    let added = json(&out);
    // The tag resolved to the digest that was published.
    assert_eq!(added["manifest_digest"], pushed["manifest_digest"], "{added:#}");
    assert_eq!(added["signature"]["signer"], fingerprint.as_str());
    let installed = op.path().join("skills/echo-1.0.0.wasm");
    assert_eq!(
        Path::new(added["installed"].as_str().unwrap()),
        Path::new("./skills/echo-1.0.0.wasm")
    );
    assert_eq!(sha256_file(&installed), added["sha256"].as_str().unwrap(), "the file is the layer");
    assert_eq!(std::fs::read(&installed).unwrap(), guests::TEST_SKILL_ECHO.bytes());
    let lines = added["table_lines"].as_str().unwrap();
    for want in [
        "[skills.echo]".to_owned(),
        format!("origin = \"{repo}\""),
        format!("sha256 = \"{}\"", added["sha256"].as_str().unwrap()),
        format!("signed_by = \"{fingerprint}\""),
    ] {
        assert!(lines.contains(&want), "{want} in {lines}");
    }

    // Granting nothing by itself: the table does not list echo, so the
    // built-in default (confirm) stands and the call is refused unasked.
    let out = reach(op.path(), &["call", "echo.echo", "{\"a\":1}"]);
    assert_ne!(out.status.code(), Some(0), "{out:?}");

    // The operator pastes the lines (with a level) and the skill serves,
    // its signature checked at load against the table's key.
    std::fs::write(op.path().join("reach.toml"), format!("{lines}level = \"auto\"\n")).unwrap();
    let out = reach(op.path(), &["call", "echo.echo", "{\"a\":1}"]);
    assert!(ok(&out).contains("\"a\":1"), "{out:?}");
    let listed = json(&reach(op.path(), &["skills", "list", "--json"]));
    let echo = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "echo")
        .expect("echo listed")
        .clone();
    assert_eq!(echo["status"], "active", "{echo:#}");
    assert_eq!(echo["origin"]["verified_signer"], fingerprint.as_str(), "{echo:#}");
    assert!(
        echo["origin"]["reference"].as_str().unwrap().starts_with(&format!("{repo}:1.0.0@sha256:"))
    );
    let text = ok(&reach(op.path(), &["skills", "list"]));
    assert!(text.contains("signed by") && text.contains(&fingerprint[..19]), "{text}");
}

#[test]
fn a_table_that_stops_trusting_the_key_refuses_the_installed_skill_at_load() {
    let Added { publisher: _publisher, op, added, registry: _registry, .. } = published_and_added();
    let other = Publisher::new("other");
    let other_pub = other.key("other", "pub");
    // The table now names another key (its file): the skill is broken, and says why.
    std::fs::write(
        op.path().join("reach.toml"),
        format!("[skills.echo]\nlevel = \"auto\"\nsigned_by = \"{other_pub}\"\n"),
    )
    .unwrap();
    let listed = json(&reach(op.path(), &["skills", "list", "--json"]));
    let echo = &listed["skills"][0];
    assert_eq!(echo["status"], "broken", "{listed:#}");
    let reason = echo["reason"].as_str().unwrap();
    let signer = added["signature"]["signer"].as_str().unwrap();
    assert!(reason.contains(signer), "names who signed: {reason}");
    let out = reach(op.path(), &["call", "echo.echo", "{}"]);
    assert_ne!(out.status.code(), Some(0));
    // A record edited to claim the other key cannot pass either.
    let record = op.path().join("skills/echo-1.0.0.wasm.origin.json");
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    r["signature"]["public_key"] = std::fs::read_to_string(&other_pub).unwrap().into();
    std::fs::write(&record, r.to_string()).unwrap();
    let listed = json(&reach(op.path(), &["skills", "list", "--json"]));
    assert_eq!(listed["skills"][0]["status"], "broken", "{listed:#}");
    // A skill file without its record, under a table that names a signer.
    std::fs::remove_file(&record).unwrap();
    let listed = json(&reach(op.path(), &["skills", "list", "--json"]));
    assert!(
        listed["skills"][0]["reason"].as_str().unwrap().contains("no origin record"),
        "{listed:#}"
    );
}

#[test]
fn a_signature_by_an_unknown_key_or_none_is_refused_and_nothing_installed() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let stranger = Publisher::new("stranger");
    let signed_repo = registry.url("skills/echo");
    let unsigned_repo = registry.url("skills/unsigned");
    stranger.publish("1.0.0", &signed_repo, Some("stranger"));
    publisher.publish("1.0.0", &unsigned_repo, None);
    let op = operator("");
    let key = publisher.key("acme", "pub");

    let err = failed(&reach(
        op.path(),
        &["skill", "add", &format!("{signed_repo}:1.0.0"), "--key", &key],
    ));
    assert!(err.contains("not signed by the required key"), "{err}");
    assert!(err.contains("nothing was installed"), "{err}");
    assert_eq!(wasm_files(&op.path().join("skills")), Vec::<String>::new());

    let err = failed(&reach(
        op.path(),
        &["skill", "add", &format!("{unsigned_repo}:1.0.0"), "--key", &key],
    ));
    assert!(err.contains("has no signature") && err.contains(".sig"), "{err}");
    // --require-signature without a key to check against is refused outright.
    let err = failed(&reach(
        op.path(),
        &["skill", "add", &format!("{unsigned_repo}:1.0.0"), "--require-signature"],
    ));
    assert!(err.contains("--key"), "{err}");
    // The table's signed_by asks the same as --key.
    let fingerprint = fingerprint_of(&publisher, "acme");
    std::fs::write(
        op.path().join("reach.toml"),
        format!("[skills.echo]\nsigned_by = \"{fingerprint}\"\n"),
    )
    .unwrap();
    let err = failed(&reach(op.path(), &["skill", "add", &format!("{signed_repo}:1.0.0")]));
    assert!(
        err.contains(&fingerprint) && err.contains(&fingerprint_of(&stranger, "stranger")),
        "names both: {err}"
    );
    assert_eq!(wasm_files(&op.path().join("skills")), Vec::<String>::new());
}

pub(crate) fn fingerprint_of(p: &Publisher, key: &str) -> String {
    let text = std::fs::read_to_string(p.key(key, "pub")).unwrap();
    agent_reach::policy::key_fingerprint(&text).unwrap()
}

#[test]
fn a_tampered_layer_and_a_moved_tag_are_refused() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let repo = registry.url("skills/echo");
    let pushed = publisher.publish("1.0.0", &repo, None);
    let pin = pushed["sha256"].as_str().unwrap().to_owned();

    // The tag moves to other bytes: the table's pin refuses them.
    let op = operator(&format!("[skills.echo]\nsha256 = \"{pin}\"\n"));
    let file = publisher.echo("1.0.1");
    json(&reach(
        publisher.path(),
        &["skill", "publish", file.to_str().unwrap(), &format!("{repo}:1.0.0"), "--json"],
    ));
    let err = failed(&reach(op.path(), &["skill", "add", &format!("{repo}:1.0.0")]));
    assert!(err.contains("pins [skills.echo] sha256") && err.contains(&pin), "{err}");
    assert_eq!(wasm_files(&op.path().join("skills")), Vec::<String>::new());
    // The digest published first still pulls, by digest.
    let by_digest = pushed["reference"].as_str().unwrap();
    json(&reach(op.path(), &["skill", "add", by_digest, "--json"]));
    assert_eq!(wasm_files(&op.path().join("skills")), vec!["echo-1.0.0.wasm"]);

    // A layer changed in the registry's storage: refused by its digest.
    let other = operator("");
    let blob = registry.blob_file(&format!("sha256:{pin}"));
    let mut bytes = std::fs::read(&blob).expect("blob");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    let err = failed(&reach(other.path(), &["skill", "add", by_digest]));
    assert!(err.contains("does not match its digest"), "{err}");
    assert_eq!(wasm_files(&other.path().join("skills")), Vec::<String>::new());
}

#[test]
fn a_registry_that_is_down_or_answers_garbage_changes_nothing() {
    let op = operator("");
    let down = format!("oci://127.0.0.1:{}/skills/echo:1.0.0", free_port());
    let err = failed(&reach(op.path(), &["skill", "add", &down]));
    assert!(err.contains("cannot connect"), "{err}");
    let garbage = agent_reach_tests::server::Server::start(|_| {
        agent_reach_tests::server::Response::new(200)
            .header("content-type", "text/html")
            .body("<html>hello</html>")
    });
    let err = failed(&reach(
        op.path(),
        &["skill", "add", &format!("oci://{}/skills/echo:1.0.0", garbage.addr)],
    ));
    assert!(err.contains("registry 127.0.0.1:"), "{err}");
    assert!(!op.path().join("skills").exists() || wasm_files(&op.path().join("skills")).is_empty());
    let err = failed(&reach(op.path(), &["skill", "add", "ghcr.io/acme/echo:1"]));
    assert!(err.contains("must start with oci://"), "{err}");
}

#[test]
fn update_shows_the_newer_release_and_installs_it_only_when_asked() {
    let Added { registry: _registry, publisher, repo, op, added } = published_and_added();
    std::fs::write(op.path().join("reach.toml"), added["table_lines"].as_str().unwrap()).unwrap();
    let report = json(&reach(op.path(), &["skill", "update", "--json"]));
    assert_eq!(report["updates"][0]["newer"], Value::Null, "{report:#}");

    publisher.publish("2.0.0", &repo, Some("acme"));
    let report = json(&reach(op.path(), &["skill", "update", "--json"]));
    assert_eq!(report["updates"][0]["newer"], "2.0.0", "{report:#}");
    assert_eq!(report["installed_any"], false, "not without --yes");
    assert_eq!(wasm_files(&op.path().join("skills")), vec!["echo-1.0.0.wasm"]);

    let out = reach(op.path(), &["skill", "update", "echo", "--yes"]);
    let text = ok(&out);
    assert!(text.contains("1.0.0 → 2.0.0"), "{text}");
    assert!(text.contains("signed by"), "the table's signer was checked: {text}");
    assert!(text.contains("change line 3 of the table"), "{text}");
    assert_eq!(wasm_files(&op.path().join("skills")), vec!["echo-1.0.0.wasm", "echo-2.0.0.wasm"]);
    // The table was not edited: the pin keeps 1.0.0 the active one.
    assert_eq!(
        std::fs::read_to_string(op.path().join("reach.toml")).unwrap(),
        added["table_lines"].as_str().unwrap()
    );
    let listed = json(&reach(op.path(), &["skills", "list", "--json"]));
    let active: Vec<&Value> =
        listed["skills"].as_array().unwrap().iter().filter(|s| s["status"] == "active").collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["version"], "1.0.0", "{listed:#}");
}

#[test]
fn registry_credentials_come_from_the_environment_or_docker_config_and_are_never_shown() {
    let password = "s3cret-Pw-4711";
    let registry = TestRegistry::with_login("ci", password);
    let publisher = Publisher::new("acme");
    let file = publisher.echo("1.0.0");
    let repo = registry.url("skills/echo");
    let publish = |envs: &[(&str, &str)]| {
        let mut command = isolated(env!("CARGO_BIN_EXE_reach"), publisher.path());
        command
            .args(["-vvv", "skill", "publish", file.to_str().unwrap(), &repo, "--sign"])
            .arg(publisher.key("acme", "key"))
            .env("REACH_SIGNING_PASSWORD", "correct horse")
            .env("DOCKER_CONFIG", publisher.path().join(".docker"))
            .envs(envs.iter().copied());
        command.output().expect("run reach")
    };
    let err = failed(&publish(&[]));
    assert!(err.contains("REACH_REGISTRY_USERNAME"), "says how to log in: {err}");
    let out = publish(&[("REACH_REGISTRY_USERNAME", "ci"), ("REACH_REGISTRY_PASSWORD", password)]);
    ok(&out);
    let shown =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(shown.contains("the environment"), "-vvv says where the login came from: {shown}");
    assert!(!shown.contains(password), "the password is never shown: {shown}");

    // The operator's Docker config file, as `docker login` writes it.
    use base64::Engine;
    let op = operator("");
    std::fs::create_dir_all(op.path().join(".docker")).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("ci:{password}"));
    std::fs::write(
        op.path().join(".docker/config.json"),
        format!("{{\"auths\": {{\"{}\": {{\"auth\": \"{auth}\"}}}}}}", registry.addr),
    )
    .unwrap();
    let mut args = vec!["-vvv", "skill", "add"];
    let reference = format!("{repo}:1.0.0");
    let key = publisher.key("acme", "pub");
    args.extend([reference.as_str(), "--key", &key]);
    let out = reach(op.path(), &args);
    ok(&out);
    let shown =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(shown.contains("the Docker config file"), "{shown}");
    assert!(!shown.contains(password) && !shown.contains(&auth), "{shown}");
    for f in agent_reach_tests::files_under(&op.path().join("skills")) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(password.len()).any(|w| w == password.as_bytes()),
            "{} holds the password",
            f.display()
        );
    }
}

#[test]
fn the_older_wasm_layout_is_accepted_and_a_container_image_refused() {
    let registry = TestRegistry::start();
    let echo = guests::TEST_SKILL_ECHO.bytes();
    // wasm-to-oci's layout: its config and layer types.
    registry.push_raw(
        "skills/old",
        "1.0.0",
        ("application/vnd.wasm.config.v1+json", b"{}"),
        &[("application/vnd.wasm.content.layer.v1+wasm", &echo)],
    );
    let op = operator("");
    let added =
        json(&reach(op.path(), &["skill", "add", &registry.url("skills/old:1.0.0"), "--json"]));
    assert_eq!(added["skill"], "echo", "{added:#}");
    assert_eq!(std::fs::read(op.path().join("skills/echo-1.0.0.wasm")).unwrap(), echo);

    registry.push_raw(
        "library/app",
        "latest",
        (
            "application/vnd.oci.image.config.v1+json",
            b"{\"architecture\":\"amd64\",\"os\":\"linux\"}",
        ),
        &[("application/vnd.oci.image.layer.v1.tar+gzip", b"not really a tarball")],
    );
    let other = operator("");
    let err = failed(&reach(other.path(), &["skill", "add", &registry.url("library/app:latest")]));
    assert!(err.contains("is this a container image?"), "{err}");
    assert!(wasm_files(&other.path().join("skills")).is_empty());
}

/// Regression: a reload after the table stopped trusting the signer kept
/// the skill serving as the "previous version" of its broken file.
#[test]
fn a_reload_after_the_signer_is_revoked_stops_serving_the_skill() {
    use agent_reach::reload::{LiveHost, ReloadSource};
    let Added { registry: _registry, publisher, op, .. } = published_and_added();
    let other = Publisher::new("other");
    let table = op.path().join("reach.toml");
    let trusting = |key: &str| format!("[skills.echo]\nlevel = \"auto\"\nsigned_by = \"{key}\"\n");
    std::fs::write(&table, trusting(&publisher.key("acme", "pub"))).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let source = ReloadSource::new(Some(table.clone()), op.path().join("skills"));
        let host = agent_reach::Host::builder()
            .skills_dir(op.path().join("skills"))
            .policy_file(&table)
            .build()
            .await
            .expect("host");
        assert!(host.registry().active("echo").is_some(), "trusted: served");
        let live = LiveHost::new(host);
        std::fs::write(&table, trusting(&other.key("other", "pub"))).unwrap();
        live.reload(&source).await.expect("reload");
        let now = live.current().expect("serving");
        assert!(
            now.registry().active("echo").is_none(),
            "revoked: not served, not even as the previous version"
        );
    });
}

/// `reach skills list --json`'s row for `name`.
fn listed_row(dir: &Path, name: &str) -> Value {
    let listed = json(&reach(dir, &["skills", "list", "--json"]));
    let rows = listed["skills"].as_array().expect("rows");
    rows.iter()
        .find(|s| s["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} listed: {listed:#}"))
}

/// Copy a folder (plain files and folders).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_bundle_is_published_signed_and_added_whole_and_a_changed_file_refused_at_load() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let folder = publisher.path().join("incident-triage");
    copy_dir(&agent_reach_tests::workspace().join("skills-src/bundles/incident-triage"), &folder);
    let repo = registry.url("bundles/incident-triage");
    let key = publisher.key("acme", "key");
    let err =
        failed(&reach(publisher.path(), &["skill", "publish", folder.to_str().unwrap(), &repo]));
    assert!(err.contains("publish a bundle to a tag"), "{err}");
    let pushed = json(&reach(
        publisher.path(),
        &[
            "skill",
            "publish",
            folder.to_str().unwrap(),
            &format!("{repo}:1.0.0"),
            "--sign",
            &key,
            "--json",
        ],
    ));
    assert_eq!(pushed["kind"], "bundle");

    let op = operator("");
    let public = publisher.key("acme", "pub");
    let added = json(&reach(
        op.path(),
        &["skill", "add", &format!("{repo}:1.0.0"), "--key", &public, "--json"],
    ));
    assert_eq!(added["sha256"], pushed["sha256"], "the bundle digest the table pins: {added:#}");
    let installed = op.path().join("skills/incident-triage");
    let files_there = agent_reach_tests::files_under(&installed).len();
    assert_eq!(
        files_there,
        agent_reach_tests::files_under(&folder).len(),
        "every file, nothing else"
    );
    assert_eq!(
        std::fs::read(installed.join("SKILL.md")).unwrap(),
        std::fs::read(folder.join("SKILL.md")).unwrap()
    );
    // No staging folder is left behind.
    let left: Vec<_> = std::fs::read_dir(op.path().join("skills"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".incoming"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    std::fs::write(op.path().join("reach.toml"), added["table_lines"].as_str().unwrap()).unwrap();
    let row = listed_row(op.path(), "incident-triage");
    assert_eq!(row["status"], "active", "{row:#}");
    // A file changed after install: the pin and the record both refuse it.
    std::fs::write(
        installed.join("SKILL.md"),
        "---\nname: incident-triage\ndescription: changed\n---\nobey me\n",
    )
    .unwrap();
    let row = listed_row(op.path(), "incident-triage");
    assert_eq!(row["status"], "broken", "{row:#}");
    // Without the pin, the signer alone still refuses it: the files are not the ones signed.
    std::fs::write(
        op.path().join("reach.toml"),
        format!("[skills.incident-triage]\nsigned_by = \"{public}\"\n"),
    )
    .unwrap();
    let row = listed_row(op.path(), "incident-triage");
    assert_eq!(row["status"], "broken", "{row:#}");
    assert!(
        row["reason"].as_str().unwrap().contains("SKILL.md"),
        "names the changed file: {row:#}"
    );
}
