//! A skill's name is bound to its file, and optionally to one digest, so a
//! component cannot take another skill's grants by claiming its name.
//!
//! Each impostor is a copy of the `echo` skill stamped with another name and
//! version (`echo_variant`): a real component that really says it is `files`.

use agent_reach::ErrorCode;
use agent_reach::registry::{SkillEntry, Status};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call, echo_variant};
use serde_json::json;

/// The real `files` may read `./docs`, on its own.
const FILES_POLICY: &str = "[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\n";

fn entry<'a>(host: &'a agent_reach::Host, file: &str) -> &'a SkillEntry {
    host.registry()
        .entries()
        .iter()
        .find(|e| e.path.file_name().is_some_and(|f| f == file))
        .unwrap_or_else(|| panic!("{file} was scanned"))
}

/// The real `files` is active and can still use its grant.
async fn assert_real_files_keeps_its_grants(ws: &Workspace, host: &agent_reach::Host) {
    let files = host.registry().active("files").expect("files is active");
    assert_eq!(
        files.loaded().path(),
        ws.path("skills/files.wasm"),
        "the real file, not the impostor"
    );
    assert!(files.manifest.tool("read").is_some());
    let out = call(host, "files.read", json!({"path": ws.path("docs/plan.md")}))
        .await
        .expect("the grant still works");
    assert!(out.contains("the plan"), "{out}");
}

fn setup() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    ws.write("docs/plan.md", "the plan\n");
    ws
}

#[tokio::test]
async fn an_impostor_claiming_a_higher_version_of_another_skill_is_broken_and_gets_nothing() {
    let ws = setup();
    ws.install_bytes("weather.wasm", &echo_variant("files", "9.9.9"));
    let host = ws.host(FILES_POLICY).await;

    let impostor = entry(&host, "weather.wasm");
    assert_eq!(impostor.status, Status::Broken);
    let reason = impostor.reason.as_deref().unwrap();
    assert!(reason.contains("weather.wasm claims to be skill `files` 9.9.9"), "{reason}");
    assert!(
        reason.contains("rename it to files.wasm or files-9.9.9.wasm"),
        "says how to fix it: {reason}"
    );
    assert_real_files_keeps_its_grants(&ws, &host).await;
    // Its own tool is not reachable under the name it claimed.
    let err = call(&host, "files.echo", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool, "{err}");
}

#[tokio::test]
async fn an_impostor_with_the_same_version_sorting_first_does_not_win() {
    let ws = setup();
    let version = {
        let host = ws.host("").await;
        host.registry().active("files").expect("files").manifest.version.to_string()
    };
    // "a.wasm" sorts before "files.wasm": before this fix the first file
    // of a name and version won and the second was the "duplicate".
    ws.install_bytes("a.wasm", &echo_variant("files", &version));
    let host = ws.host(FILES_POLICY).await;
    assert_eq!(entry(&host, "a.wasm").status, Status::Broken);
    assert_eq!(entry(&host, "files.wasm").status, Status::Active);
    assert_real_files_keeps_its_grants(&ws, &host).await;
}

#[tokio::test]
async fn an_impostor_alone_takes_nothing_and_the_refusal_says_why() {
    let ws = Workspace::new();
    ws.write("docs/plan.md", "the plan\n");
    ws.install_bytes("weather.wasm", &echo_variant("files", "9.9.9"));
    let host = ws.host(FILES_POLICY).await;
    assert!(host.registry().active("files").is_none(), "nothing is `files`");
    assert!(host.registry().active_skills().is_empty());
    let err =
        call(&host, "files.echo", json!({"path": ws.path("docs/plan.md")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(
        err.message.contains("failed to load from")
            && err.message.contains("claims to be skill `files`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_versioned_file_name_must_carry_the_manifest_version_exactly() {
    let ws = Workspace::new();
    ws.install_bytes("echo-1.2.0.wasm", &echo_variant("echo", "1.2.0"));
    ws.install_bytes("echo-1.3.wasm", &echo_variant("echo", "1.3.0"));
    ws.install_bytes("echo-2.0.0.wasm", &echo_variant("echo", "9.0.0"));
    let host = ws.host("").await;
    let echo = host.registry().active("echo").expect("echo-1.2.0.wasm is accepted");
    assert_eq!(echo.manifest.version.to_string(), "1.2.0");
    for (file, claims) in [("echo-1.3.wasm", "1.3.0"), ("echo-2.0.0.wasm", "9.0.0")] {
        let e = entry(&host, file);
        assert_eq!(e.status, Status::Broken, "{file}");
        let reason = e.reason.as_deref().unwrap();
        assert!(reason.contains(&format!("{file} claims to be skill `echo` {claims}")), "{reason}");
        assert!(reason.contains(&format!("echo-{claims}.wasm")), "{reason}");
    }
}

#[tokio::test]
async fn a_pinned_skill_refuses_a_newer_file_with_both_digests() {
    let ws = setup();
    let pinned = {
        let host = ws.host("").await;
        host.registry().active("files").expect("files").loaded().sha256().to_owned()
    };
    assert_eq!(pinned.len(), 64);
    // Correctly named, and newer: without the pin it would supersede files.
    ws.install_bytes("files-9.9.9.wasm", &echo_variant("files", "9.9.9"));
    let policy = format!("{FILES_POLICY}sha256 = \"{pinned}\"\n");
    let host = ws.host(&policy).await;

    let newer = entry(&host, "files-9.9.9.wasm");
    assert_eq!(newer.status, Status::Broken, "the pin is checked before versions are compared");
    let found = newer.sha256.clone().expect("digest of the refused file");
    assert_ne!(found, pinned);
    let reason = newer.reason.as_deref().unwrap();
    assert!(
        reason.contains(&format!(
            "pinned to sha256 {pinned} ({} line 4)",
            ws.path("reach.toml").display()
        )),
        "{reason}"
    );
    assert!(reason.contains(&format!("this file's sha256 is {found}")), "{reason}");
    assert_real_files_keeps_its_grants(&ws, &host).await;
}

#[tokio::test]
async fn a_pin_no_file_matches_leaves_the_skill_inactive() {
    let ws = setup();
    let policy = format!("{FILES_POLICY}sha256 = \"{}\"\n", "0".repeat(64));
    let host = ws.host(&policy).await;
    assert!(host.registry().active("files").is_none());
    let files = entry(&host, "files.wasm");
    assert_eq!(files.status, Status::Broken);
    let err =
        call(&host, "files.read", json!({"path": ws.path("docs/plan.md")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("is pinned to sha256 0000"), "{err}");
}
