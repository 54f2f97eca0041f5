//! The `search` tool: find lines matching a text or a regular expression in
//! one file or a whole folder tree.
//!
//! The walk is deterministic (entries in name order) and stops at the first
//! match past the cap, so a broad pattern over a large tree costs no more
//! than the answer it produces. Unreadable, binary and very large files are
//! skipped and counted rather than failing the search: one odd file should
//! not hide the matches in all the others.

use crate::lines::{Lines, strip_newline};
use agent_reach_sdk::fs::{self, Access};
use agent_reach_sdk::prelude::*;
use regex::bytes::{Regex, RegexBuilder};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::ops::ControlFlow;
use std::path::Path;

/// Matches returned when the call gives no `max_results`.
pub(crate) const DEFAULT_RESULTS: usize = 100;
/// Most matches one search returns.
pub(crate) const MAX_RESULTS: usize = 1000;
/// Files larger than this are skipped: scanning them would eat the time
/// limit of the call, and such files are rarely what a model is after.
const MAX_FILE_SIZE: u64 = 50 * 1024 * 1024;
/// How much of the start of a file is checked for NUL bytes, git's and
/// ripgrep's heuristic for "binary".
const BINARY_SNIFF: usize = 8 * 1024;
/// Longest piece of a line matched at once; a longer line is matched piece
/// by piece (reported once), which bounds memory on minified files.
const MAX_PIECE: usize = 1024 * 1024;
/// Longest `text` of a match, in characters.
const MAX_TEXT: usize = 300;
/// Characters of context kept before the match when a long line is cut.
const LEAD: usize = 100;
/// Folders of version-control systems: their contents are internal
/// bookkeeping and would drown real matches.
const SKIPPED_FOLDERS: [&str; 3] = [".git", ".hg", ".svn"];

/// Arguments of `search`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// A file, or a folder to search recursively: absolute, or relative to
    /// the host's working directory.
    pub path: String,
    /// The text to find in each line; a regular expression (Rust `regex`
    /// syntax) when `regex` is true.
    pub pattern: String,
    /// Treat `pattern` as a regular expression (default false: plain text).
    #[serde(default)]
    pub regex: bool,
    /// Whether upper and lower case must match exactly (default true).
    #[schemars(extend("default" = true))]
    pub case_sensitive: Option<bool>,
    /// Most matches to return (default 100, at most 1000; larger values are
    /// treated as 1000).
    #[schemars(range(min = 1), extend("default" = DEFAULT_RESULTS))]
    pub max_results: Option<usize>,
}

/// What `search` returns.
#[derive(Serialize)]
struct Found {
    /// The matching lines, in path order then line order.
    matches: Vec<Match>,
    /// Whether more matches exist than were returned.
    truncated: bool,
    /// How many files were read.
    files_searched: usize,
    /// How many entries were passed over: binary files, files over 50 MB,
    /// symlinked folders, special files and anything unreadable.
    skipped: usize,
}

/// One matching line.
#[derive(Serialize)]
struct Match {
    /// The file, as an absolute path.
    path: String,
    /// 1-based line number, as editors show it.
    line: usize,
    /// The line, cut to at most 300 characters around the match.
    text: String,
}

/// The state of one search.
struct Search {
    pattern: Regex,
    max: usize,
    found: Found,
}

/// Search a file or folder for lines matching the pattern.
pub(crate) fn search(args: SearchArgs) -> Result<String, ToolError> {
    let root = fs::resolve(&args.path);
    let max = args.max_results.unwrap_or(DEFAULT_RESULTS).min(MAX_RESULTS);
    if max == 0 {
        return Err(ToolError::invalid_arguments("search: `max_results` must be at least 1"));
    }
    let mut search = Search {
        pattern: compile(&args)?,
        max,
        found: Found { matches: Vec::new(), truncated: false, files_searched: 0, skipped: 0 },
    };

    // Errors on the path the model named are reported; errors deeper in the
    // tree only count as skipped.
    let meta = std::fs::metadata(&root).map_err(|err| fs::io_error(Access::Read, &root, &err))?;
    // The size limit is for walks, where a stray dump would eat the time
    // limit; a file the model names is searched whatever its size, since
    // paging through it with `read` would be far slower.
    let searched = if meta.is_dir() { search.walk(&root) } else { search.scan(&root) };
    // An early stop needs no handling here: it is already recorded in `truncated`.
    if let Err(err) = searched {
        return Err(fs::io_error(Access::Read, &root, &err));
    }
    Ok(serde_json::to_string(&search.found)?)
}

/// Build the matcher. Plain text goes through `regex` too (escaped), which
/// gives Unicode-aware case folding and fast literal search in one place.
fn compile(args: &SearchArgs) -> Result<Regex, ToolError> {
    if args.pattern.is_empty() {
        return Err(ToolError::invalid_arguments(
            "search: `pattern` is empty; give the text to find",
        ));
    }
    let source = if args.regex { args.pattern.clone() } else { regex::escape(&args.pattern) };
    RegexBuilder::new(&source)
        .case_insensitive(!args.case_sensitive.unwrap_or(true))
        .build()
        .map_err(|err| {
            ToolError::invalid_arguments(format!(
                "search: `pattern` is not a valid regular expression: {err}\n\
                 (set `regex` to false to search for the text as it is)"
            ))
        })
}

impl Search {
    /// Search every file under `dir`, in name order, without following
    /// symlinked folders (they can loop, or lead out of the tree).
    fn walk(&mut self, dir: &Path) -> io::Result<ControlFlow<()>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            entries.push((entry.file_name(), entry.file_type()?));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));

        for (name, file_type) in entries {
            let path = dir.join(&name);
            let flow = if file_type.is_dir() {
                if SKIPPED_FOLDERS.iter().any(|skip| name == *skip) {
                    continue;
                }
                self.walk(&path)
            } else {
                // Symlinks to files are followed (the runtime still keeps
                // them inside the grants); symlinks to folders are not.
                match std::fs::metadata(&path) {
                    Ok(meta) if meta.is_file() => self.file(&path, meta.len()),
                    Ok(_) => {
                        self.found.skipped += 1;
                        continue;
                    }
                    Err(err) => Err(err),
                }
            };
            match flow {
                Ok(ControlFlow::Break(())) => return Ok(ControlFlow::Break(())),
                Ok(ControlFlow::Continue(())) => {}
                Err(_) => self.found.skipped += 1,
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Search a file met during a walk, unless it is too large.
    fn file(&mut self, path: &Path, size: u64) -> io::Result<ControlFlow<()>> {
        if size > MAX_FILE_SIZE {
            self.found.skipped += 1;
            return Ok(ControlFlow::Continue(()));
        }
        self.scan(path)
    }

    /// Search one file of any size; `Break` once the match cap has been passed.
    fn scan(&mut self, path: &Path) -> io::Result<ControlFlow<()>> {
        let mut reader = BufReader::with_capacity(64 * 1024, File::open(path)?);
        let head = reader.fill_buf()?;
        if head[..head.len().min(BINARY_SNIFF)].contains(&0) {
            self.found.skipped += 1;
            return Ok(ControlFlow::Continue(()));
        }
        self.found.files_searched += 1;

        let shown = path.display().to_string();
        let mut lines = Lines::new(reader);
        let mut buf = Vec::new();
        // A line longer than MAX_PIECE arrives in pieces; report it once.
        let mut reported = None;
        loop {
            buf.clear();
            let Some(piece) = lines.read_piece(&mut buf, MAX_PIECE)? else { break };
            if reported == Some(piece.line) {
                continue;
            }
            let text = if piece.ends_line { strip_newline(&buf) } else { &buf[..] };
            let Some(found) = self.pattern.find(text) else { continue };
            if self.found.matches.len() == self.max {
                self.found.truncated = true;
                return Ok(ControlFlow::Break(()));
            }
            reported = Some(piece.line);
            self.found.matches.push(Match {
                path: shown.clone(),
                line: piece.line + 1,
                text: excerpt(text, found.start()),
            });
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// The line as text, cut to [`MAX_TEXT`] characters (markers included)
/// around the match so that a match deep in a long line stays visible.
fn excerpt(line: &[u8], match_start: usize) -> String {
    let text = String::from_utf8_lossy(line);
    let total = text.chars().count();
    if total <= MAX_TEXT {
        return text.into_owned();
    }
    let width = MAX_TEXT - 2;
    let at = String::from_utf8_lossy(&line[..match_start]).chars().count();
    let begin = at.saturating_sub(LEAD).min(total - width);
    let mut out = String::with_capacity(MAX_TEXT * 4);
    if begin > 0 {
        out.push('…');
    }
    out.extend(text.chars().skip(begin).take(width));
    if begin + width < total {
        out.push('…');
    }
    out
}
