//! The confirmation gate: a per-tool level that names no real tool is a
//! load error, and what a person is asked to confirm cannot be forged by
//! the arguments.

use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{Host, confirmation_prompt};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, workspace};
use serde_json::json;

async fn load(ws: &Workspace, toml: &str) -> Result<Host, String> {
    let policy = Policy::load(&ws.policy(toml)).map_err(|e| e.to_string())?;
    let config = RuntimeConfig {
        cache_dir: Some(workspace().join("target/test-compile-cache")),
        pooling: true,
    };
    Host::load(config, policy, &ws.path("skills")).await.map_err(|e| e.to_string())
}

#[tokio::test]
async fn an_override_for_a_tool_the_skill_lacks_is_a_load_error() {
    // Regression: `[skills.files.tools.Write] level = "deny"` loaded fine
    // and denied nothing: the real tool is `write`.
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    let err = load(
        &ws,
        "[skills.files]\nlevel = \"auto\"\n\n[skills.files.tools.Write]\nlevel = \"deny\"\n",
    )
    .await
    .map(|_| ())
    .unwrap_err();
    assert!(
        err.contains("reach.toml:4: [skills.files.tools.Write]: skill files has no tool `Write`"),
        "{err}"
    );
    assert!(
        err.contains("its tools: list, read, write, search") && err.contains("case-sensitive"),
        "{err}"
    );

    let host = load(
        &ws,
        "[skills.files]\nlevel = \"auto\"\n\n[skills.files.tools.write]\nlevel = \"deny\"\n",
    )
    .await
    .expect("a real tool");
    assert_eq!(host.policy().level("files", "write"), agent_reach::policy::Level::Deny);
    // A skill that is not installed cannot run, so its overrides are only
    // warned about by `reach policy check`.
    load(&ws, "[skills.weather.tools.forecast]\nlevel = \"deny\"\n")
        .await
        .expect("not installed: not an error");
}

#[test]
fn arguments_cannot_redraw_the_confirmation_prompt() {
    // Regression: values were printed raw, so "\r\x1b[2K" could erase the
    // real path and print a harmless-looking one over it.
    let forged = "/home/ana/.ssh/authorized_keys\r\u{1b}[2K  path: notes/todo.md";
    let long = "A".repeat(10_000);
    let prompt = confirmation_prompt(
        "files",
        "write",
        &json!({"path": forged, "content": long, "mode\u{202e}": 1}),
    );
    assert!(
        !prompt.chars().any(|c| c.is_control() && c != '\n'),
        "no control characters but the line breaks: {prompt:?}"
    );
    let lines: Vec<&str> = prompt.lines().collect();
    assert_eq!(lines.len(), 4, "one line per argument: {prompt}");
    assert!(
        lines.iter().any(|l| l.starts_with("  path: /home/ana/.ssh/authorized_keys\\r\\u{1b}[2K")),
        "{prompt}"
    );
    assert!(prompt.contains(" … [10000 characters in full] … "), "{prompt}");
    assert!(prompt.len() < 1_000, "a long value is cut: {} bytes", prompt.len());
    assert!(prompt.contains("mode\\u{202e}"), "keys are escaped too: {prompt}");
}
