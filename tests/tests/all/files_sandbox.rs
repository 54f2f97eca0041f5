//! Filesystem grants, enforced by the runtime: the `probe` skill uses plain
//! `std::fs`, so these prove the sandbox, not checks in the SDK; the `files`
//! skill shows what a model sees.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call};
use serde_json::json;

fn setup() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE).install(guests::SKILL_FILES);
    ws.write("docs/guide.md", "line one\nline two\nneedle here\n");
    ws.write("secret/token.txt", "s3cret");
    ws.mkdir("notes");
    ws
}

fn policy(ws: &Workspace) -> String {
    format!(
        r#"
[defaults]
level = "auto"

[skills.probe]
read = ["{docs}"]
write = ["{notes}"]

[skills.files]
read = ["./docs"]
write = ["./notes"]
"#,
        docs = ws.path("docs").display(),
        notes = ws.path("notes").display()
    )
}

#[tokio::test]
async fn read_inside_a_read_grant_works() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let path = ws.path("docs/guide.md");
    let out = call(&host, "probe.read", json!({"path": path})).await.expect("read granted file");
    assert!(out.contains("needle here"), "{out}");
}

#[tokio::test]
async fn read_outside_every_grant_is_refused_by_the_runtime() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let err =
        call(&host, "probe.read", json!({"path": ws.path("secret/token.txt")})).await.unwrap_err();
    assert!(!err.message.contains("s3cret"));
    let err = call(&host, "probe.read", json!({"path": "/etc/passwd"})).await.unwrap_err();
    assert!(!err.message.contains("root:"), "{err}");
}

#[tokio::test]
async fn dot_dot_cannot_leave_a_grant() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let sneaky = format!("{}/../secret/token.txt", ws.path("docs").display());
    let err = call(&host, "probe.read", json!({"path": sneaky})).await.unwrap_err();
    assert!(!err.message.contains("s3cret"), "{err}");
    let err = call(&host, "files.read", json!({"path": sneaky})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
}

#[tokio::test]
async fn a_symlink_inside_a_grant_cannot_point_outside_it() {
    let ws = setup();
    std::os::unix::fs::symlink(ws.path("secret/token.txt"), ws.path("docs/link.txt"))
        .expect("symlink");
    std::os::unix::fs::symlink(ws.path("secret"), ws.path("docs/linkdir")).expect("symlink");
    let host = ws.host(&policy(&ws)).await;
    for target in ["docs/link.txt", "docs/linkdir/token.txt"] {
        let result = call(&host, "probe.read", json!({"path": ws.path(target)})).await;
        let err = result.expect_err("symlink escape must fail");
        assert!(!err.message.contains("s3cret"), "{err}");
    }
}

#[tokio::test]
async fn read_only_grants_are_read_only() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let target = ws.path("docs/new.txt");
    call(&host, "probe.write", json!({"path": target, "content": "x"})).await.unwrap_err();
    assert!(!target.exists(), "the runtime let a read-only grant be written");
    let err =
        call(&host, "files.write", json!({"path": target, "content": "x"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("read-only") || err.message.contains("not granted"), "{err}");
    assert!(!target.exists());
}

#[tokio::test]
async fn writes_land_in_writable_grants_on_the_host() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let target = ws.path("notes/today.md");
    call(&host, "probe.write", json!({"path": target, "content": "from probe"}))
        .await
        .expect("write");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "from probe");
    let nested = ws.path("notes/sub/dir/file.md");
    call(&host, "files.write", json!({"path": nested, "content": "nested"}))
        .await
        .expect("files.write");
    assert_eq!(std::fs::read_to_string(&nested).unwrap(), "nested");
}

#[tokio::test]
async fn writes_outside_writable_grants_are_denied_with_the_grants_listed() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let err = call(&host, "files.write", json!({"path": ws.path("elsewhere.txt"), "content": "x"}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied);
    assert!(err.message.starts_with("files: "), "names the skill: {err}");
    assert!(
        err.message.contains(&ws.path("notes").display().to_string()),
        "lists the writable grant: {err}"
    );
    assert!(!ws.path("elsewhere.txt").exists());
}

#[tokio::test]
async fn a_skill_missing_from_the_table_gets_no_folders() {
    let ws = setup();
    let host = ws.host("[defaults]\nlevel = \"auto\"\n").await;
    let grants = call(&host, "probe.grants", json!({})).await.expect("grants");
    assert_eq!(grants, "[]");
    call(&host, "probe.read", json!({"path": ws.path("docs/guide.md")})).await.unwrap_err();
}

#[tokio::test]
async fn files_tools_list_read_search_work_in_grants() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let list = call(&host, "files.list", json!({"path": ws.path("docs")})).await.expect("list");
    assert!(list.contains("guide.md"), "{list}");
    let read = call(
        &host,
        "files.read",
        json!({"path": ws.path("docs/guide.md"), "offset": 1, "limit": 1}),
    )
    .await
    .expect("read");
    let read: serde_json::Value = serde_json::from_str(&read).unwrap();
    assert_eq!(read["content"].as_str().unwrap().trim_end(), "line two");
    let found = call(&host, "files.search", json!({"path": ws.path("docs"), "pattern": "needle"}))
        .await
        .expect("search");
    let found: serde_json::Value = serde_json::from_str(&found).unwrap();
    assert_eq!(found["matches"][0]["line"], 3, "{found}");
}

#[tokio::test]
async fn relative_paths_resolve_against_the_hosts_working_directory() {
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    // The tests run with the package folder as working directory, which is not granted.
    let err = call(&host, "files.read", json!({"path": "Cargo.toml"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    let cwd = std::env::current_dir().unwrap();
    assert!(err.message.contains(&cwd.join("Cargo.toml").display().to_string()), "{err}");
}

#[tokio::test]
async fn a_granted_folder_deleted_and_made_again_is_the_one_written() {
    // The host keeps granted folders open between calls; it must notice
    // that the path now names another folder, or writes would vanish into
    // the deleted one.
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let path = ws.path("notes/a.txt");
    let path = path.to_str().unwrap();
    call(&host, "probe.write", json!({"path": path, "content": "first"}))
        .await
        .expect("first write");
    std::fs::remove_dir_all(ws.path("notes")).unwrap();
    let err =
        call(&host, "probe.write", json!({"path": path, "content": "lost?"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "no folder, no write: {err}");
    ws.mkdir("notes");
    call(&host, "probe.write", json!({"path": path, "content": "second"}))
        .await
        .expect("second write");
    assert_eq!(std::fs::read_to_string(ws.path("notes/a.txt")).unwrap(), "second");
}

#[tokio::test]
async fn a_granted_folder_swapped_for_a_symlink_is_not_followed() {
    // Regression: a granted folder was (re)opened by path, following
    // symlinks, so a skill able to write its parent could replace it with a
    // link to `/` (here: to `secret/`) and read through the grant.
    let ws = setup();
    let host = ws.host(&policy(&ws)).await;
    let docs = ws.path("docs");
    let out = call(&host, "probe.read", json!({"path": docs.join("guide.md")}))
        .await
        .expect("first call opens the grant");
    assert!(out.contains("needle here"), "{out}");

    std::fs::rename(&docs, ws.path("docs-old")).expect("move the granted folder away");
    std::os::unix::fs::symlink(ws.path("secret"), &docs).expect("put a symlink in its place");
    let err = call(&host, "probe.read", json!({"path": docs.join("token.txt")})).await.unwrap_err();
    assert!(!err.message.contains("s3cret"), "{err}");
    let err = call(&host, "files.read", json!({"path": docs.join("token.txt")})).await.unwrap_err();
    assert!(!err.message.contains("s3cret"), "{err}");
}
