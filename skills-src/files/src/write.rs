//! The `write` tool: create, overwrite or append to a text file.
//!
//! There is no permission check here on purpose: the host preopens writable
//! grants read-write and everything else read-only or not at all, so the
//! runtime refuses a write outside them and [`fs::io_error`] turns that
//! refusal into a `denied` error that lists the grants.

use agent_reach_sdk::fs::{self, Access};
use agent_reach_sdk::prelude::*;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// Arguments of `write`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteArgs {
    /// The file to write: absolute, or relative to the host's working
    /// directory. Missing parent folders are created.
    pub path: String,
    /// The text to write (UTF-8), exactly as it should appear in the file.
    pub content: String,
    /// Add `content` to the end of the file instead of replacing the file
    /// (default false). The file is created when it does not exist.
    #[serde(default)]
    pub append: bool,
}

/// What `write` returns.
#[derive(Serialize)]
struct Written {
    /// The file, as an absolute path.
    path: String,
    /// How many bytes this call wrote.
    bytes: usize,
    /// Whether the file did not exist before.
    created: bool,
}

/// Write `content` to a file, creating it and its parent folders as needed.
pub(crate) fn write(args: WriteArgs) -> Result<String, ToolError> {
    let path = fs::resolve(&args.path);
    let denied_or_failed = |err: io::Error| fs::io_error(Access::Write, &path, &err);

    let created = match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::invalid_arguments(format!(
                "{} is a folder; give the path of a file inside it",
                path.display()
            )));
        }
        Ok(_) => false,
        // Any other failure (outside every grant, say) is reported by the
        // open below, with the grants listed.
        Err(_) => true,
    };

    if created {
        create_parents(&path)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .append(args.append)
        .truncate(!args.append)
        .open(&path)
        .map_err(denied_or_failed)?;
    file.write_all(args.content.as_bytes()).map_err(denied_or_failed)?;

    Ok(serde_json::to_string(&Written {
        path: path.display().to_string(),
        bytes: args.content.len(),
        created,
    })?)
}

/// Create the missing folders above `path`.
fn create_parents(path: &Path) -> Result<(), ToolError> {
    let Some(parent) = path.parent() else { return Ok(()) };
    if parent.is_dir() {
        return Ok(());
    }
    // `create_dir_all` reports a file in the way as "File exists", which
    // reads as if the target existed; name the file that blocks the path.
    if let Some(blocker) = parent.ancestors().find(|a| a.exists()).filter(|a| !a.is_dir()) {
        return Err(ToolError::invalid_arguments(format!(
            "cannot create {}: {} is a file, not a folder",
            path.display(),
            blocker.display()
        )));
    }
    std::fs::create_dir_all(parent).map_err(|err| fs::io_error(Access::Write, path, &err))
}
