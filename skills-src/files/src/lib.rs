//! The `files` skill: list, read, write and search files in the folders the
//! operator granted.
//!
//! The skill uses plain `std::fs` on absolute paths. The host preopens each
//! granted folder at its own host path, read-only or read-write, and the
//! runtime refuses everything else — so this crate holds no allow-list of its
//! own; it only turns the runtime's refusals into errors that name the grants
//! (see `agent_reach_sdk::fs::io_error`).
//!
//! One module per tool group: `read` (`list`, `read`), `write` and
//! `search`, with the bounded line reader they share in `lines`.

use agent_reach_sdk::prelude::*;
use serde_json::json;

mod lines;
mod read;
mod search;
mod write;

/// For the model choosing among skills: what the skill is for and the two
/// facts that explain most failures (path resolution, grants).
const DESCRIPTION: &str = "Work with files on the host: list folders, read text files by lines, \
write or append to files, and search file contents. Paths are absolute or relative to the host's \
working directory; only the folders the operator granted are reachable, and only some of them are \
writable.";

/// Shown when a model asks for this skill: how to use the tools well.
const INSTRUCTIONS: &str = r#"# Working with files

- **Paths** are absolute, or relative to the host's working directory. Only the folders the
  operator granted are reachable; a `denied` error lists them (readable and writable). Do not
  retry a denied path with spelling variations such as `..` or symlinks: the sandbox
  refuses those too. Ask the user to grant the folder instead. The sandbox also refuses
  symlinks whose target is an absolute path, even one inside a granted folder (`list` then
  shows no `target` for them); relative symlinks that stay inside a grant work.
- **Finding things:** in a large or unknown tree, `search` first, then `read` the files it
  points to, starting near the reported line (`offset` = line − 1, minus some context).
  `list` shows one folder at a time; use it to look around, not to crawl a tree.
- **Reading:** `read` returns at most `limit` lines (default 400, at most 5000) and at most
  64 KiB of text. When `truncated` is true, call it again with `offset` set to
  `next_offset`. `total_lines` tells you how big the file is before you read all of it.
  Binary data is shown with `�` replacement characters; such files are rarely worth reading.
- **Searching:** plain text by default and case-sensitive; set `case_sensitive: false` to
  ignore case, or `regex: true` for a regular expression (Rust `regex` syntax, no
  look-around). Folders are searched recursively in name order, leaving out `.git`, `.hg`
  and `.svn`. Binary files, files over 50 MB, symlinked folders and unreadable entries met
  on the way are passed over and counted in `skipped`; a file you name in `path` is searched
  whatever its size, which is the fast way through a huge log. If `truncated` is true, narrow the `path` or the
  `pattern`.
- **Writing:** `write` replaces the whole file (or adds to its end with `append: true`)
  and creates missing parent folders. To change part of a file, `read` it, then `write`
  the complete new content. `created` tells you whether the file is new.
"#;

/// The skill type exported to the host.
struct Files;

impl Skill for Files {
    fn define() -> Definition {
        Definition::new("files", env!("CARGO_PKG_VERSION"), DESCRIPTION)
            .instructions(INSTRUCTIONS)
            .tool(
                "list",
                "List the entries of one folder: name, kind (file, dir, symlink, other), size in \
                 bytes for files and target for symlinks, sorted by name, at most 1000 (then \
                 `truncated` is true). Use it to see what a folder holds; to find files by content \
                 in a tree, use `search`; to see a file, use `read`.",
                read::list,
            )
            .example(
                "See what the project folder holds.",
                json!({"path": "."}),
                Some(concat!(
                    r#"{"path":"/home/ana/project","entries":[{"name":"Cargo.toml","#,
                    r#""kind":"file","size":412},{"name":"src","kind":"dir"}],"#,
                    r#""truncated":false}"#
                )),
            )
            .tool(
                "read",
                "Read a text file by lines: `offset` is the 0-based first line (default 0), \
                 `limit` the most lines (default 400, at most 5000); at most 64 KiB of text per \
                 call. Returns the lines with `total_lines`; when `truncated` is true, call again \
                 with `offset` = `next_offset`. Works on files of any size. For folders use \
                 `list`; to find where something is in a large file or tree, `search` first.",
                read::read,
            )
            .example(
                "Read lines 120 to 159 of a log file.",
                json!({"path": "/var/log/app/server.log", "offset": 120, "limit": 40}),
                None,
            )
            .tool(
                "write",
                "Write text to a file: create it, replace its whole content, or add to its end \
                 with `append: true`. Missing parent folders are created. Only works in folders \
                 granted as writable. To edit part of a file, `read` it first and write the full \
                 new content.",
                write::write,
            )
            .example(
                "Save notes to a new file.",
                json!({"path": "notes/todo.md", "content": "# To do\n\n- reply to Sam\n"}),
                Some(r#"{"path":"/home/ana/project/notes/todo.md","bytes":24,"created":true}"#),
            )
            .tool(
                "search",
                "Find lines containing a text (or matching a regular expression with `regex: \
                 true`) in one file or, recursively, in every text file under a folder. \
                 Case-sensitive unless `case_sensitive: false`. Returns the path, 1-based line \
                 number and text of each matching line, at most `max_results` (default 100, at \
                 most 1000). Use it before `read` to find where something is.",
                search::search,
            )
            .example(
                "Find where a function is defined, ignoring case.",
                json!({"path": "src", "pattern": "fn parse_config", "case_sensitive": false}),
                Some(concat!(
                    r#"{"matches":[{"path":"/home/ana/project/src/config.rs","line":42,"#,
                    r#""text":"pub fn parse_config(text: &str) -> Result<Config, Error> "#,
                    r#"{"}],"truncated":false,"files_searched":17,"skipped":0}"#
                )),
            )
    }
}

export_skill!(Files);
