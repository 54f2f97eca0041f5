//! The reading tools: `list` a folder and `read` a file by lines.
//!
//! Both return bounded answers (1000 entries, 5000 lines, 64 KiB) because
//! everything they return lands in a model's context window; each answer
//! says whether it was cut and, for `read`, where to continue.

use crate::lines::{Lines, cut_at};
use agent_reach_sdk::fs::{self, Access};
use agent_reach_sdk::prelude::*;
use std::fs::{File, FileType};
use std::io::BufReader;
use std::path::Path;

/// Most entries `list` returns; a folder with more is cut after this many
/// names (in sorted order), so a `node_modules` cannot flood the context.
pub(crate) const MAX_ENTRIES: usize = 1000;
/// Lines `read` returns when the call gives no `limit`.
pub(crate) const DEFAULT_LIMIT: usize = 400;
/// Most lines one `read` returns.
pub(crate) const MAX_LIMIT: usize = 5000;
/// Most bytes of text one `read` returns, whatever the line count.
pub(crate) const MAX_CONTENT: usize = 64 * 1024;

/// Arguments of `list`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// The folder to list: absolute, or relative to the host's working directory.
    pub path: String,
}

/// What `list` returns.
#[derive(Serialize)]
struct Listing {
    /// The folder, as an absolute path.
    path: String,
    /// Its entries, sorted by name.
    entries: Vec<Entry>,
    /// Whether the folder has more than [`MAX_ENTRIES`] entries.
    truncated: bool,
}

/// One entry of a listing.
#[derive(Serialize)]
struct Entry {
    name: String,
    /// `file`, `dir`, `symlink` or `other`.
    kind: &'static str,
    /// Size in bytes; files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    /// Where a symlink points, as stored in the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
}

/// List the entries of a folder.
pub(crate) fn list(args: ListArgs) -> Result<String, ToolError> {
    let path = fs::resolve(&args.path);
    let dir = std::fs::read_dir(&path).map_err(|err| {
        not_a_folder(&path).unwrap_or_else(|| fs::io_error(Access::Read, &path, &err))
    })?;

    // Names and types come with the directory stream; sizes need a `stat`
    // each, so sort and cut first and only stat the entries we return.
    let mut found: Vec<(String, FileType)> = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|err| fs::io_error(Access::Read, &path, &err))?;
        let file_type =
            entry.file_type().map_err(|err| fs::io_error(Access::Read, &entry.path(), &err))?;
        found.push((entry.file_name().to_string_lossy().into_owned(), file_type));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let truncated = found.len() > MAX_ENTRIES;
    found.truncate(MAX_ENTRIES);

    let entries = found
        .into_iter()
        .map(|(name, file_type)| {
            // A file that vanished or cannot be stat'ed is still listed, just
            // without a size: the listing matters more than one number.
            let full = path.join(&name);
            let mut entry = Entry { kind: "other", size: None, target: None, name };
            if file_type.is_file() {
                entry.kind = "file";
                entry.size = std::fs::symlink_metadata(&full).ok().map(|m| m.len());
            } else if file_type.is_dir() {
                entry.kind = "dir";
            } else if file_type.is_symlink() {
                // The target tells the model where a relative link leads. The
                // sandbox refuses to read links to absolute paths (even into a
                // grant), so those are listed without one.
                entry.kind = "symlink";
                entry.target = std::fs::read_link(&full).ok().map(|t| t.display().to_string());
            }
            entry
        })
        .collect();
    Ok(serde_json::to_string(&Listing { path: path.display().to_string(), entries, truncated })?)
}

/// When `path` is a file, the error that sends the model to `read` instead.
fn not_a_folder(path: &Path) -> Option<ToolError> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_dir()).then(|| {
        ToolError::invalid_arguments(format!(
            "{} is a file, not a folder; use `read` to see its content",
            path.display()
        ))
    })
}

/// Arguments of `read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// The file to read: absolute, or relative to the host's working directory.
    pub path: String,
    /// 0-based index of the first line to return (default 0). To continue a
    /// truncated read, pass the previous answer's `next_offset`.
    #[schemars(extend("default" = 0))]
    pub offset: Option<usize>,
    /// How many lines to return at most (default 400, at most 5000; larger
    /// values are treated as 5000). Independently of this, one answer holds
    /// at most 64 KiB of text.
    #[schemars(range(min = 1), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<usize>,
}

/// What `read` returns.
#[derive(Serialize)]
struct Reading {
    /// The file, as an absolute path.
    path: String,
    /// The returned lines, with their original line endings.
    content: String,
    /// Index of the first returned line.
    offset: usize,
    /// How many lines `content` holds.
    lines: usize,
    /// How many lines the whole file has.
    total_lines: usize,
    /// Whether lines after the returned ones remain.
    truncated: bool,
    /// Where to continue when `truncated`, else `null`.
    next_offset: Option<usize>,
    /// Why the answer stopped early, when it was not the line limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// Return lines `offset..offset + limit` of a text file, streaming it so
/// that a huge file costs time, not memory.
pub(crate) fn read(args: ReadArgs) -> Result<String, ToolError> {
    let path = fs::resolve(&args.path);
    let offset = args.offset.unwrap_or(0);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
    if limit == 0 {
        return Err(ToolError::invalid_arguments("read: `limit` must be at least 1"));
    }

    let meta = std::fs::metadata(&path).map_err(|err| fs::io_error(Access::Read, &path, &err))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "{} is a folder, not a file; use `list` to see its entries or `search` to find text in \
             it",
            path.display()
        )));
    }
    let file = File::open(&path).map_err(|err| fs::io_error(Access::Read, &path, &err))?;
    let io = |err: std::io::Error| fs::io_error(Access::Read, &path, &err);
    let mut lines = Lines::new(BufReader::with_capacity(64 * 1024, file));

    for _ in 0..offset {
        if !lines.skip_line().map_err(io)? {
            break;
        }
    }

    let mut content = String::new();
    let mut returned = 0;
    let mut note = None;
    let mut buf = Vec::new();
    while returned < limit {
        buf.clear();
        // One byte over the budget is enough to know a line does not fit.
        let Some(piece) = lines.read_piece(&mut buf, MAX_CONTENT + 1).map_err(io)? else { break };
        if !piece.ends_line {
            lines.skip_line().map_err(io)?;
        }
        let text = String::from_utf8_lossy(&buf);
        let room = MAX_CONTENT - content.len();
        if text.len() <= room {
            content.push_str(&text);
            returned += 1;
            continue;
        }
        if returned == 0 {
            // A single line longer than the budget: return its start rather
            // than nothing, or the model would ask for this offset forever.
            content.push_str(cut_at(&text, room));
            returned = 1;
            note = Some(format!(
                "the line at offset {} is longer than {} KiB; only its start is shown; use \
                 `search` to find text inside it",
                piece.line,
                MAX_CONTENT / 1024
            ));
        } else {
            note = Some(format!(
                "stopped at the {} KiB answer limit; continue with offset {}",
                MAX_CONTENT / 1024,
                offset + returned
            ));
        }
        break;
    }

    // A line that did not fit was consumed but not returned, so it still
    // counts as remaining here and the next call starts with it.
    let total_lines = lines.count_rest().map_err(io)?;
    let truncated = offset + returned < total_lines;
    Ok(serde_json::to_string(&Reading {
        path: path.display().to_string(),
        content,
        offset,
        lines: returned,
        total_lines,
        truncated,
        next_offset: truncated.then_some(offset + returned),
        note,
    })?)
}
