//! Loading skills from a folder, versions, broken files, and the checks
//! before a call runs: unknown tools, invalid arguments, levels.

use agent_reach::registry::Status;
use agent_reach::{ErrorCode, NeverConfirm};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call, echo_variant};
use serde_json::json;

#[tokio::test]
async fn the_newest_version_is_active_and_older_ones_superseded() {
    let ws = Workspace::new();
    ws.install_bytes("echo-1.0.0.wasm", &echo_variant("echo", "1.0.0"));
    ws.install_bytes("echo-2.0.0.wasm", &echo_variant("echo", "2.0.0"));
    ws.install_bytes("echo-1.10.0.wasm", &echo_variant("echo", "1.10.0"));
    let host = ws.host("").await;
    let active = host.registry().active("echo").expect("echo active");
    assert_eq!(active.manifest.version.to_string(), "2.0.0");
    let statuses: Vec<(String, Status)> = host
        .registry()
        .entries()
        .iter()
        .map(|e| (e.manifest.as_ref().unwrap().version.to_string(), e.status))
        .collect();
    assert!(statuses.contains(&("1.0.0".into(), Status::Superseded)), "{statuses:?}");
    assert!(statuses.contains(&("1.10.0".into(), Status::Superseded)), "{statuses:?}");
    assert_eq!(host.registry().active_skills().len(), 1, "never both offered");
}

#[tokio::test]
async fn the_same_name_and_version_twice_is_reported() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    ws.install_bytes("echo-1.0.0.wasm", &echo_variant("echo", "1.0.0"));
    let host = ws.host("").await;
    let broken: Vec<_> =
        host.registry().entries().iter().filter(|e| e.status == Status::Broken).collect();
    assert_eq!(broken.len(), 1);
    assert!(
        broken[0].reason.as_deref().unwrap().contains("already provided by"),
        "{:?}",
        broken[0].reason
    );
}

#[tokio::test]
async fn broken_files_are_reported_and_the_others_still_load() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    ws.install_bytes("garbage.wasm", b"this is not wasm at all");
    ws.install_bytes("truncated.wasm", &guests::TEST_SKILL_ECHO.bytes()[..4000]);
    // A core module: valid wasm, but not a component.
    ws.install_bytes("core.wasm", b"\0asm\x01\0\0\0");
    let host = ws.host("").await;
    assert!(host.registry().active("probe").is_some());
    let reasons: Vec<(String, String)> = host
        .registry()
        .entries()
        .iter()
        .filter(|e| e.status == Status::Broken)
        .map(|e| {
            (e.path.file_name().unwrap().to_string_lossy().into_owned(), e.reason.clone().unwrap())
        })
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    let reason = |f: &str| reasons.iter().find(|(n, _)| n == f).map(|(_, r)| r.clone()).unwrap();
    assert!(reason("garbage.wasm").contains("not a WebAssembly file"), "{reasons:?}");
    assert!(reason("core.wasm").contains("not a component"), "{reasons:?}");
    assert!(reason("truncated.wasm").contains("does not compile"), "{reasons:?}");
    // Refused before loading, but the digest is still shown (sha256sum's).
    let garbage =
        host.registry().entries().iter().find(|e| e.path.ends_with("garbage.wasm")).unwrap();
    assert_eq!(
        garbage.sha256.as_deref(),
        Some("f89b776a35a646c6d49c88aadf7267af463c2cd18fdb613e13d090e3260860b5")
    );
    // Asking for a broken skill explains why it is unavailable.
    let err = call(&host, "garbage.anything", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("failed to load"), "{err}");

    // A huge file is refused by its size, without being read or compiled.
    std::fs::File::create(ws.path("skills/huge.wasm")).unwrap().set_len(300 << 20).unwrap();
    let host = ws.host("").await;
    let huge = host.registry().entries().iter().find(|e| e.path.ends_with("huge.wasm")).unwrap();
    assert!(
        huge.reason.as_deref().unwrap().contains("components over 256 MiB are not loaded"),
        "{:?}",
        huge.reason
    );
    assert!(huge.sha256.is_none());
    let err = call(&host, "garbage.anything", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("failed to load"), "{err}");
}

#[tokio::test]
async fn unknown_skills_and_tools_list_what_exists() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    let host = ws.host("[defaults]\nlevel = \"auto\"\n").await;
    let err = call(&host, "nope.read", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("available: probe"), "{err}");
    let err = call(&host, "probe.nope", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("env_all"), "{err}");
}

#[tokio::test]
async fn arguments_are_validated_against_the_schema_before_the_skill_runs() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    let host = ws.host("[defaults]\nlevel = \"auto\"\n").await;
    let err = call(&host, "probe.read", json!({"path": 42})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs);
    assert!(err.message.contains("/path"), "names the failing field: {err}");
    let err = call(&host, "probe.read", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs);
    assert!(err.message.contains("path"), "{err}");
    let err =
        host.invoke("probe", "read", "{not json", &agent_reach::AlwaysConfirm).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs);
}

#[tokio::test]
async fn level_deny_forbids_and_confirm_needs_a_person() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    let host = ws
        .host(
            "[skills.probe]\n\
             level = \"auto\"\n\
             [skills.probe.tools.env]\n\
             level = \"deny\"\n\
             [skills.probe.tools.grants]\n\
             level = \"L1\"\n",
        )
        .await;
    let err = call(&host, "probe.env", json!({"name": "HOME"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied);
    assert!(err.message.contains("level = deny"), "{err}");
    let err = host.invoke("probe", "grants", "{}", &NeverConfirm).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied);
    assert!(err.message.contains("confirmation"), "{err}");
    call(&host, "probe.grants", json!({})).await.expect("confirmed call runs");
    call(&host, "probe.env_all", json!({})).await.expect("auto runs");
}

#[tokio::test]
async fn manifests_carry_schemas_derived_from_argument_types() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    let host = ws.host("").await;
    let files = host.registry().active("files").expect("files skill");
    let names: Vec<&str> = files.manifest.tools.iter().map(|t| t.name.as_str()).collect();
    for tool in ["list", "read", "write", "search"] {
        assert!(names.contains(&tool), "{names:?}");
    }
    let read = files.manifest.tool("read").unwrap();
    assert_eq!(read.parameters["type"], "object");
    assert!(read.parameters["properties"]["path"].is_object(), "{}", read.parameters);
    assert_eq!(read.parameters["required"], json!(["path"]));
}

#[tokio::test]
async fn a_skill_named_like_a_built_in_tool_is_refused_at_load_and_says_to_rename_it() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    const RESERVED: [&str; 4] = ["memory", "skills", "agents", "workbench"];
    for name in RESERVED {
        ws.install_bytes(&format!("{name}.wasm"), &echo_variant(name, "1.0.0"));
    }
    let host = ws.host("").await;
    assert!(host.registry().active("probe").is_some(), "the other skills still load");
    for name in RESERVED {
        assert!(host.registry().active(name).is_none(), "{name} is not active");
        let entry = host
            .registry()
            .entries()
            .iter()
            .find(|e| e.path.ends_with(format!("{name}.wasm")))
            .unwrap();
        assert_eq!(entry.status, Status::Broken, "{name}");
        let reason = entry.reason.as_deref().unwrap();
        assert!(
            reason.contains(&format!(
                "skill name \"{name}\" is reserved for the harness's built-in tools \
                 (memory__remember, memory__recall, skills__open, skills__instructions, \
                 agents__delegate, workbench__read); rename the skill"
            )),
            "{reason}"
        );
        // Asking for it says why it is unavailable.
        let err = call(&host, &format!("{name}.echo"), json!({"x": 1})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::NoSuchTool);
        assert!(
            err.message.contains("failed to load") && err.message.contains("is reserved"),
            "{err}"
        );
    }
}
