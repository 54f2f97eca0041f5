//! A bundle's `run_script`: one of its Python or JavaScript scripts, run by
//! the runner component for its language with the bundle's grants and its
//! folder read-only.
//!
//! The host, not the runner, reads the script: only a path the bundle's
//! manifest lists, only bytes matching the digest taken when the bundle
//! loaded (and a pin covers), so a script swapped on disk after the scan
//! never runs. The runner gets the checked source and the bundle folder,
//! preopened read-only beside the folders the table grants the bundle;
//! nothing else is added to its grants.

use crate::bundle::{self, Bundle};
use crate::error::{ErrorCode, ToolFailure};
use crate::policy::{FolderGrant, SkillGrants};
use crate::registry::{Language, RUNNER_TOOL};
use crate::runtime::{LoadedSkill, Runtime};
use serde_json::{Value, json};

/// Most characters of a failing script's stderr put into the error.
const STDERR_TAIL: usize = 4000;

/// Run `arguments.script` of `bundle` in the runner for its language (from
/// `runners`) with `grants` (the bundle's, already narrowed to the call's
/// reach).
pub(super) async fn run(
    runtime: &Runtime,
    runners: &[(Language, LoadedSkill)],
    bundle: &Bundle,
    mut grants: SkillGrants,
    arguments: &Value,
) -> Result<String, ToolFailure> {
    let script = arguments.get("script").and_then(Value::as_str).unwrap_or_default();
    let language = Language::of(script);
    let Some((language, runner)) = runners.iter().find(|(l, _)| Some(*l) == language) else {
        return Err(ToolFailure::new(
            ErrorCode::InvalidArgs,
            format!("{script} is not a script this bundle can run here; run_script lists those"),
        ));
    };
    let source = bundle::read::text(bundle, script).map_err(|e| {
        tracing::warn!(skill = %bundle.name, script, "script refused: {e}");
        ToolFailure::new(ErrorCode::Denied, e.to_string())
    })?;
    let dir = std::fs::canonicalize(&bundle.dir).map_err(|e| {
        ToolFailure::new(
            ErrorCode::Failed,
            format!("the {} bundle folder cannot be opened: {e}", bundle.name),
        )
    })?;
    let shown = dir.to_string_lossy().into_owned();
    // The bundle's own folder, read-only; a folder the table already grants
    // read-write keeps that (grants are never narrowed by this).
    if !grants.write.iter().chain(&grants.read).any(|g| g.path == dir) {
        grants.read.push(FolderGrant {
            path: dir.clone(),
            declared: shown.clone(),
            lexical: dir.clone(),
            exists: true,
        });
    }
    tracing::info!(skill = %bundle.name, script, runner = language.name(), "running a bundle script in its runner");
    let request = json!({
        "path": format!("{shown}/{}", script.trim_start_matches("./")),
        "source": source,
        "bundle": shown,
        "args": arguments.get("args").cloned().unwrap_or_else(|| json!([])),
        "stdin": arguments.get("stdin").cloned().unwrap_or_else(|| json!("")),
    });
    let out = runtime.call(runner, &grants, RUNNER_TOOL, &request.to_string()).await?;
    shape(script, language.name(), &out)
}

/// The runner's `{exit_code, stdout, stderr}` as the model reads it: what
/// the script printed, stderr after it; a non-zero exit is a `FAILED`
/// error with the end of stderr.
fn shape(script: &str, language: &str, out: &str) -> Result<String, ToolFailure> {
    let value: Value = serde_json::from_str(out).map_err(|e| {
        ToolFailure::new(ErrorCode::Failed, format!("the {language} runner answered no JSON: {e}"))
    })?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let (stdout, stderr) = (text("stdout"), text("stderr"));
    let status = value.get("exit_code").and_then(Value::as_i64).unwrap_or(1);
    if status != 0 {
        let tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            chars[chars.len().saturating_sub(STDERR_TAIL)..].iter().collect()
        };
        let mut message = format!("{script} exited with status {status}");
        if !tail.trim().is_empty() {
            message.push_str(&format!(":\n{}", tail.trim_end()));
        }
        if !stdout.trim().is_empty() {
            message.push_str(&format!("\n[stdout]\n{}", stdout.trim_end()));
        }
        return Err(ToolFailure::new(ErrorCode::Failed, message));
    }
    let mut result = stdout;
    if !stderr.trim().is_empty() {
        result.push_str(&format!("\n[stderr]\n{}", stderr.trim_end()));
    }
    if result.trim().is_empty() {
        result = format!("{script} ran and printed nothing (exit status 0)");
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_script_is_an_error_with_its_stderr() {
        let ok =
            shape("scripts/a.py", "Python", r#"{"exit_code":0,"stdout":"done\n","stderr":""}"#);
        assert_eq!(ok.unwrap(), "done\n");
        let err = shape(
            "scripts/a.py",
            "Python",
            r#"{"exit_code":2,"stdout":"","stderr":"usage: a.py FILE\n"}"#,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Failed);
        assert!(err.message.contains("status 2") && err.message.contains("usage: a.py"), "{err:?}");
        let quiet =
            shape("scripts/a.py", "Python", r#"{"exit_code":0,"stdout":"","stderr":""}"#).unwrap();
        assert!(quiet.contains("printed nothing"));
    }
}
