//! The `to_markdown` tool: fetch a page, keep its main content as Markdown,
//! write it to a file in a writable grant, and return only where it went.
//!
//! No permission check here: the host preopens writable grants read-write
//! and nothing else, so the runtime refuses a write anywhere else and
//! [`fs::io_error`] turns that into `denied` with the grants listed.

use crate::download::{self, Page};
use agent_reach_sdk::fs::{self, Access};
use agent_reach_sdk::prelude::*;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use web_convert::{Article, ConvertError, Provenance};

/// Bytes of HTML converted at most. Bigger pages are mostly scripts and
/// inline data; their beginning holds the article. Parsing needs several
/// times the page size in memory, within the skill's `memory_mb`.
pub(crate) const MAX_PAGE_BYTES: usize = 4 << 20;

/// Arguments of `to_markdown`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToMarkdownArgs {
    /// The page to save: an http(s) URL such as "https://example.com/blog/post"
    /// ("https://" is assumed when the scheme is left out). Only hosts the operator
    /// granted are reachable.
    pub url: String,
    /// Folder to save into, absolute or relative to the host's working directory; it
    /// must be inside a writable grant and is created if missing. The file is named
    /// `<host>_<YYYYMMDD-HHMMSS>.md`. Default: the first writable folder granted.
    pub output_dir: Option<String>,
    /// Exact file to write instead (for example "notes/pricing.md"). An existing file
    /// is not replaced unless `overwrite` is true. Give `path` or `output_dir`, not both
    /// (both are accepted when `path` is inside `output_dir`: the file is what is meant).
    pub path: Option<String>,
    /// Replace the file at `path` if it exists (default false: an existing file is
    /// an error and stays as it was).
    pub overwrite: Option<bool>,
}

/// What `to_markdown` returns — never the page itself.
#[derive(Serialize)]
struct Saved {
    /// HTTP status of the page (after redirects).
    status: u16,
    /// The Markdown file written, as an absolute path.
    path: String,
    /// Characters written to the file.
    chars: usize,
    /// The page's title.
    title: String,
    /// Present (true) only when the page was larger than the cap and only its beginning was
    /// converted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
}

/// Fetch, convert and save a page.
pub(crate) fn to_markdown(args: ToMarkdownArgs) -> Result<serde_json::Value, ToolError> {
    let target = Target::from_args(&args)?;
    let page = download::get(&args.url, MAX_PAGE_BYTES)?;
    refuse_error_pages(&page)?;
    let fetched_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let article = convert(&page)?;
    let document =
        article.to_document(Provenance { url: &page.url, fetched_at, truncated: page.truncated });
    let path = match target {
        Target::File(path) => write_file(&path, &document, args.overwrite.unwrap_or(false))?,
        Target::Folder(dir) => {
            write_new_file(&dir, &web_convert::file_name(&page.url, fetched_at), &document)?
        }
    };
    let saved = Saved {
        status: page.status,
        path: path.display().to_string(),
        chars: document.chars().count(),
        title: article.title,
        truncated: page.truncated,
    };
    Ok(serde_json::to_value(saved)?)
}

/// Where the Markdown goes.
enum Target {
    File(PathBuf),
    Folder(PathBuf),
}

impl Target {
    /// Decided before fetching, so a call that could never be saved costs no request.
    fn from_args(args: &ToMarkdownArgs) -> Result<Self, ToolError> {
        let path = match (&args.path, &args.output_dir) {
            (Some(path), Some(dir)) => {
                // Models often give the folder along with the file in it
                // ("notes/a.md" in "notes"): the file is what they mean.
                let (file, folder) = (fs::resolve(path), fs::resolve(dir));
                if file == folder || !file.starts_with(&folder) {
                    return Err(ToolError::invalid_arguments(format!(
                        "to_markdown: give `path` (a file) or `output_dir` (a folder), not both; \
                         `path` {} is not inside `output_dir` {}: to write that file, call again \
                         without `output_dir`",
                        file.display(),
                        folder.display()
                    )));
                }
                Some(path)
            }
            (path, _) => path.as_ref(),
        };
        match (path, &args.output_dir) {
            (Some(path), _) => {
                let path = fs::resolve(path);
                // A folder given as `path` is read as "save into this folder".
                if path.is_dir() {
                    return Ok(Target::Folder(path));
                }
                // Checked before fetching too, so a refused call costs no request.
                if path.exists() && args.overwrite != Some(true) {
                    return Err(exists(&path));
                }
                Ok(Target::File(path))
            }
            (None, Some(dir)) => Ok(Target::Folder(fs::resolve(dir))),
            (None, None) => match fs::grants().into_iter().find(|g| g.writable) {
                Some(grant) => Ok(Target::Folder(grant.path)),
                None => Err(ToolError::denied(format!(
                    "web: to_markdown needs a writable folder to save the page in, and the \
                     permission table grants none ({}); ask the operator to add one to `write` for \
                     the web skill",
                    fs::describe_grants()
                ))),
            },
        }
    }
}

/// A 4xx or 5xx answer is the server's error page, not the page asked for:
/// saving it would look like success.
fn refuse_error_pages(page: &Page) -> Result<(), ToolError> {
    let status = page.status;
    if (200..300).contains(&status) {
        return Ok(());
    }
    let message = format!(
        "GET {} answered {status} {}; nothing was saved",
        page.url,
        download::reason(status)
    );
    Err(match status {
        404 | 410 => ToolError::not_found(format!(
            "{message}. Check the URL, or search the site for the page's new address."
        )),
        401 | 403 => ToolError::failed(format!(
            "{message}. The page needs a login or refuses automated access."
        )),
        429 | 500..=599 => {
            ToolError::failed(format!("{message}. The server may be overloaded; try again later."))
        }
        _ => ToolError::failed(format!("{message}.")),
    })
}

/// HTML through the extractor; plain text and Markdown as they are (the
/// same code the native benchmark runs).
fn convert(page: &Page) -> Result<Article, ToolError> {
    web_convert::convert_response(&page.body, page.content_type.as_deref(), &page.url).map_err(
        |err| match err {
            ConvertError::InvalidUrl { .. } => ToolError::invalid_arguments(err.to_string()),
            ConvertError::NotAPage { ref content_type } if web_convert::is_text(content_type) => {
                ToolError::failed(format!(
                    "{}: {err}; nothing was saved. Use web.fetch to read this response as text.",
                    page.url
                ))
            }
            _ => ToolError::failed(format!("{}: {err}; nothing was saved", page.url)),
        },
    )
}

/// Write a file the caller named, creating its folders. An existing file is
/// replaced only with `overwrite`: a page (untrusted text) must not silently
/// take the place of a file someone else wrote.
fn write_file(path: &Path, content: &str, overwrite: bool) -> Result<PathBuf, ToolError> {
    create_folder(path.parent().unwrap_or(Path::new("/")), path)?;
    let mut options = OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        // Atomic with the check: a file that appeared since is not replaced either.
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|err| match err.kind() {
        io::ErrorKind::AlreadyExists => exists(path),
        _ => fs::io_error(Access::Write, path, &err),
    })?;
    file.write_all(content.as_bytes()).map_err(|err| fs::io_error(Access::Write, path, &err))?;
    Ok(path.to_owned())
}

fn exists(path: &Path) -> ToolError {
    ToolError::invalid_arguments(format!(
        "{} already exists and was left as it is; pass \"overwrite\": true to replace it, or give \
         another `path` (or `output_dir`, which always makes a new file)",
        path.display()
    ))
}

/// Write a new file named `name` in `dir`; if that name is taken (two saves
/// of one host in the same second), `name-2.md`, `name-3.md`, ….
fn write_new_file(dir: &Path, name: &str, content: &str) -> Result<PathBuf, ToolError> {
    create_folder(dir, &dir.join(name))?;
    let stem = name.strip_suffix(".md").unwrap_or(name);
    for n in 1..=100 {
        let path = if n == 1 { dir.join(name) } else { dir.join(format!("{stem}-{n}.md")) };
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                file.write_all(content.as_bytes())
                    .map_err(|err| fs::io_error(Access::Write, &path, &err))?;
                return Ok(path);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(fs::io_error(Access::Write, &path, &err)),
        }
    }
    Err(ToolError::failed(format!(
        "{}: 100 files named {stem}*.md already exist; give `path`",
        dir.display()
    )))
}

/// Create `dir` and its parents; errors name `for_file`, the path the model gave.
fn create_folder(dir: &Path, for_file: &Path) -> Result<(), ToolError> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(blocker) = dir.ancestors().find(|a| a.exists()).filter(|a| !a.is_dir()) {
        return Err(ToolError::invalid_arguments(format!(
            "cannot create {}: {} is a file, not a folder",
            for_file.display(),
            blocker.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|err| fs::io_error(Access::Write, for_file, &err))
}
