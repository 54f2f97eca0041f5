//! A confirmation across instances: a `confirm` call asked at one instance, answered at the
//! other, then the same answer sent again through the balancer (protocol 2026-07-28).

use crate::client::{Client, Protocol};
use crate::report::Confirmation;
use serde_json::json;
use std::path::Path;

/// The file the confirmed write creates, in the workspace.
const PATH: &str = "notes/confirmed-under-load.md";

/// Ask at `asked_at`, answer at `answered_at`, replay at `replay_at` (each an MCP URL);
/// `workspace` is where the write lands.
pub async fn across(
    asked_at: &str,
    answered_at: &str,
    replay_at: &str,
    token: &str,
    workspace: &Path,
) -> Confirmation {
    let mut seen = Confirmation::default();
    if let Err(problem) = steps(asked_at, answered_at, replay_at, token, workspace, &mut seen).await
    {
        seen.problem = Some(problem);
    }
    seen
}

async fn steps(
    asked_at: &str,
    answered_at: &str,
    replay_at: &str,
    token: &str,
    workspace: &Path,
    seen: &mut Confirmation,
) -> Result<(), String> {
    let arguments = json!({"path": PATH, "content": "written after the person said yes"});
    // One client, as the server knows it (token and declared name), at three addresses.
    let client = |url: &str| Client::new(url, token, Protocol::Stateless, "the-person's-editor");
    let failed =
        |step: &str, e: crate::client::CallError| format!("{step}: {} {}", e.kind, e.detail);

    let asked = client(asked_at)
        .tools_call("files__write", arguments.clone(), None)
        .await
        .map_err(|e| failed("asking", e))?
        .result;
    if asked["resultType"] != "input_required" {
        return Err(format!("asking: no question came back: {asked}"));
    }
    seen.asked = true;
    let state = asked["requestState"].as_str().ok_or(format!("no requestState in {asked}"))?;

    let done = client(answered_at)
        .tools_call("files__write", arguments.clone(), Some(("accept", state)))
        .await
        .map_err(|e| failed("answering", e))?
        .result;
    let written = workspace.join(PATH);
    if done["isError"] != false || !written.exists() {
        return Err(format!("answering: the write did not run at the other instance: {done}"));
    }
    seen.ran_at_other_instance = true;
    std::fs::remove_file(&written).map_err(|e| format!("{}: {e}", written.display()))?;

    let replayed = client(replay_at)
        .tools_call("files__write", arguments, Some(("accept", state)))
        .await
        .map_err(|e| failed("replaying", e))?
        .result;
    let refusal = replayed["structuredContent"]["error"].as_str().unwrap_or("");
    seen.replay_refused = replayed["structuredContent"]["error_code"] == "DENIED"
        && refusal.contains("already used")
        && !written.exists();
    if !seen.replay_refused {
        return Err(format!("replaying: the used answer was not refused: {replayed}"));
    }
    Ok(())
}
