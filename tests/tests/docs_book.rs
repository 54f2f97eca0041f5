//! The book under `docs/` and the README that leads to it, checked the way a reader would trip
//! over them: every chapter is in `SUMMARY.md`, every `{{#include}}` and every internal link and
//! anchor resolves, and every `reach …` command they show still exists with the flags it is shown
//! with. No network and no mdBook: links to other sites are not followed, and anchors are
//! computed from the headings as mdBook and GitHub compute them (and compared with the built
//! book when `just docs` has built it). The commands are checked against the help of the `reach`
//! binary that `cargo test` (or `cargo build -p agent-reach --bin reach`) builds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root, with links resolved (every path compared here is).
fn workspace() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    canonical(&root).expect("the workspace exists")
}

fn book_src() -> PathBuf {
    workspace().join("docs/src")
}

/// The path with `..` and links resolved, if it exists.
fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where a document's text is and where its relative links start from.
struct Doc {
    path: PathBuf,
    /// The text with `{{#include}}` expanded, as mdBook renders it.
    text: String,
}

impl Doc {
    fn load(path: &Path) -> Doc {
        let text = expand(path, &read(path), 0);
        Doc { path: canonical(path).expect("a document that was read exists"), text }
    }

    fn dir(&self) -> &Path {
        self.path.parent().expect("a document lies in a folder")
    }

    fn name(&self) -> String {
        self.path.strip_prefix(workspace()).unwrap_or(&self.path).display().to_string()
    }
}

/// mdBook's `{{#include FILE}}` and `{{#include FILE:ANCHOR}}` (the lines between `ANCHOR: name`
/// and `ANCHOR_END: name`); lines holding anchor markers never reach the page.
fn expand(path: &Path, text: &str, depth: usize) -> String {
    assert!(depth < 8, "{}: includes nested too deep (a cycle?)", path.display());
    let dir = path.parent().expect("a document lies in a folder");
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(spec) =
            trimmed.strip_prefix("{{#include ").and_then(|rest| rest.strip_suffix("}}"))
        {
            let spec = spec.trim();
            let (file, anchor) = match spec.rsplit_once(':') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (spec, None),
            };
            let target = dir.join(file);
            assert!(
                target.is_file(),
                "{}: `{trimmed}` includes {}, which does not exist",
                path.display(),
                target.display()
            );
            let included = read(&target);
            let part = match anchor {
                None => included,
                Some(name) => anchored(&included, name).unwrap_or_else(|| {
                    panic!(
                        "{}: `{trimmed}`: {} has no `ANCHOR: {name}` … `ANCHOR_END: {name}`",
                        path.display(),
                        target.display()
                    )
                }),
            };
            out.push_str(&expand(&target, &part, depth + 1));
        } else if !is_anchor_marker(trimmed) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn is_anchor_marker(line: &str) -> bool {
    line.contains("ANCHOR: ") || line.contains("ANCHOR_END: ")
}

fn anchored(text: &str, name: &str) -> Option<String> {
    let start = format!("ANCHOR: {name}");
    let end = format!("ANCHOR_END: {name}");
    let mut lines = text.lines().skip_while(|l| !l.contains(&start));
    lines.next()?;
    let mut out = String::new();
    for line in lines {
        if line.contains(&end) {
            return Some(out);
        }
        if !is_anchor_marker(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    None
}

/// One piece of a document: prose (links and inline code count) or a fenced code block.
enum Block {
    Prose(String),
    Code(String),
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker: String = trimmed.chars().take_while(|&c| c == '`' || c == '~').collect();
        match &fence {
            // An info string with a backtick makes the line a code span, not a fence.
            None if marker.len() >= 3
                && !(marker.starts_with('`') && trimmed[marker.len()..].contains('`')) =>
            {
                out.push(Block::Prose(std::mem::take(&mut current)));
                fence = Some(marker);
            }
            Some(open) if trimmed.starts_with(open.as_str()) && trimmed.trim() == marker => {
                out.push(Block::Code(std::mem::take(&mut current)));
                fence = None;
            }
            _ => {
                current.push_str(line);
                current.push('\n');
            }
        }
    }
    out.push(match fence {
        Some(_) => Block::Code(current),
        None => Block::Prose(current),
    });
    out
}

/// Inline code spans of a piece of prose, and the prose with each span blanked out (so a link
/// shown as code is not taken for a link). A span ends at the next run of as many backticks.
fn code_spans(prose: &str) -> (Vec<String>, String) {
    let chars: Vec<char> = prose.chars().collect();
    let mut spans = Vec::new();
    let mut rest = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            rest.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        let body_start = i + run;
        let mut j = body_start;
        let mut end = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let len = chars[j..].iter().take_while(|&&c| c == '`').count();
                if len == run {
                    end = Some(j);
                    break;
                }
                j += len;
            } else {
                j += 1;
            }
        }
        match end {
            Some(end) => {
                spans.push(chars[body_start..end].iter().collect());
                rest.push_str("code");
                i = end + run;
            }
            None => {
                rest.extend(&chars[i..body_start]);
                i = body_start;
            }
        }
    }
    (spans, rest)
}

/// Link targets in prose: `[text](target)`, `[text](target "title")` and `[label]: target`.
fn links(prose: &str) -> Vec<String> {
    let inline = regex::Regex::new(r#"\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)"#).unwrap();
    let reference = regex::Regex::new(r"(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?\s*$").unwrap();
    let mut out: Vec<String> = inline.captures_iter(prose).map(|c| c[1].to_string()).collect();
    out.extend(reference.captures_iter(prose).map(|c| c[1].to_string()));
    out
}

/// The ids of a document's headings, as mdBook and GitHub make them: the heading's text without
/// markup, lower case, spaces as `-`, punctuation other than `-` and `_` dropped, and `-1`, `-2`
/// after a repeated one.
fn heading_ids(text: &str) -> BTreeSet<String> {
    let link = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for block in blocks(text) {
        let Block::Prose(prose) = block else { continue };
        for line in prose.lines() {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
                continue;
            }
            let title = line[hashes..].trim().trim_end_matches('#').trim();
            let title = link.replace_all(title, "$1");
            let id: String = title
                .chars()
                .filter(|&c| c != '`' && c != '*')
                .filter_map(|c| {
                    if c.is_alphanumeric() || c == '_' || c == '-' {
                        Some(c.to_lowercase().next().unwrap_or(c))
                    } else if c.is_whitespace() {
                        Some('-')
                    } else {
                        None
                    }
                })
                .collect();
            let count = seen.entry(id.clone()).or_insert(0);
            ids.insert(if *count == 0 { id.clone() } else { format!("{id}-{count}") });
            *count += 1;
        }
    }
    ids
}

/// The chapters `SUMMARY.md` lists, as paths.
fn chapters() -> Vec<PathBuf> {
    let summary = book_src().join("SUMMARY.md");
    let mut out = Vec::new();
    for target in links(&read(&summary)) {
        if !target.is_empty() {
            let path = book_src().join(&target);
            let chapter = canonical(&path).unwrap_or_else(|| {
                panic!("SUMMARY.md lists {target}, which does not exist ({})", path.display())
            });
            out.push(chapter);
        }
    }
    out
}

/// The documents checked: the README and every chapter.
fn docs() -> Vec<Doc> {
    let mut out = vec![Doc::load(&workspace().join("README.md"))];
    out.extend(chapters().iter().map(|c| Doc::load(c)));
    out
}

#[test]
fn every_page_under_docs_src_is_a_chapter_of_the_summary() {
    let listed: BTreeSet<PathBuf> = chapters().into_iter().collect();
    let mut missing = Vec::new();
    let mut stack = vec![book_src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md")
                && path.file_name().is_some_and(|n| n != "SUMMARY.md")
                && canonical(&path).is_none_or(|p| !listed.contains(&p))
            {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "pages no reader can reach (add them to SUMMARY.md): {missing:?}");
}

#[test]
fn every_internal_link_and_anchor_of_the_book_and_the_readme_resolves() {
    let chapters: BTreeSet<PathBuf> = chapters().into_iter().collect();
    let docs = docs();
    let ids: BTreeMap<PathBuf, BTreeSet<String>> =
        docs.iter().map(|d| (d.path.clone(), heading_ids(&d.text))).collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let in_book = doc.path.starts_with(book_src());
        for block in blocks(&doc.text) {
            let Block::Prose(prose) = block else { continue };
            let (_, prose) = code_spans(&prose);
            for target in links(&prose) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let joined = doc.dir().join(file);
                let found =
                    if file.is_empty() { Some(doc.path.clone()) } else { canonical(&joined) };
                let Some(path) = found else {
                    broken.push(format!(
                        "{}: `{target}`: {} does not exist",
                        doc.name(),
                        joined.display()
                    ));
                    continue;
                };
                let is_page = path.extension().is_some_and(|e| e == "md");
                // mdBook turns every `.md` link into `.html`: one to a page outside the book
                // would point at a file that is not there.
                if in_book && is_page && !chapters.contains(&path) {
                    broken.push(format!(
                        "{}: `{target}`: {} is not a chapter of the book (include it in one)",
                        doc.name(),
                        path.display()
                    ));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                let known = ids
                    .get(&path)
                    .cloned()
                    .or_else(|| is_page.then(|| heading_ids(&Doc::load(&path).text)));
                if !known.is_some_and(|ids| ids.contains(anchor)) {
                    broken.push(format!(
                        "{}: `{target}`: no heading of {} has the id `{anchor}`",
                        doc.name(),
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found: is the scanner still reading the book?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// When `just docs` has built the book, the ids it computed are the ones mdBook wrote.
#[test]
fn the_heading_ids_computed_here_are_the_ones_the_built_book_has() {
    let built = workspace().join("docs/book");
    if !built.join("index.html").is_file() {
        eprintln!("docs/book is not built (`just docs` builds it); comparing with it skipped");
        return;
    }
    let id = regex::Regex::new(r#"<h[1-6] id="([^"]+)""#).unwrap();
    let mut differ = Vec::new();
    for chapter in chapters() {
        let page = built.join(chapter.strip_prefix(book_src()).unwrap()).with_extension("html");
        if !page.is_file() {
            differ.push(format!("{} was not built", page.display()));
            continue;
        }
        let html = read(&page);
        let written: BTreeSet<String> = id.captures_iter(&html).map(|c| c[1].to_string()).collect();
        let computed = heading_ids(&Doc::load(&chapter).text);
        if written != computed {
            differ.push(format!(
                "{}: mdBook wrote {:?}, computed here {:?}",
                chapter.display(),
                written.difference(&computed).collect::<Vec<_>>(),
                computed.difference(&written).collect::<Vec<_>>()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The `reach` binary the workspace builds.
fn reach_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("REACH_BIN") {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let path = target.join("debug/reach");
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build -p agent-reach --bin reach` (`just docs` does)",
        path.display()
    );
    path
}

/// What `reach … --help` says a command takes.
#[derive(Default)]
struct Help {
    subcommands: BTreeSet<String>,
    /// Long flags (`--json`) and short ones (`-v`), each with whether it takes a value.
    flags: BTreeMap<String, bool>,
}

/// The help of every command, asked once each.
struct Cli {
    binary: PathBuf,
    helps: BTreeMap<Vec<String>, Help>,
}

impl Cli {
    fn help(&mut self, path: &[String]) -> &Help {
        if !self.helps.contains_key(path) {
            let output = Command::new(&self.binary)
                .args(path)
                .arg("--help")
                .env("COLUMNS", "200")
                .output()
                .unwrap_or_else(|e| panic!("{}: {e}", self.binary.display()));
            let text = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "`{} --help` failed: {text}", shown(path));
            self.helps.insert(path.to_vec(), parse_help(&text));
        }
        &self.helps[path]
    }
}

fn parse_help(text: &str) -> Help {
    let subcommand = regex::Regex::new(r"^  ([a-z][a-z0-9-]*)(\s|$)").unwrap();
    let flag = regex::Regex::new(r"^\s+(?:-([A-Za-z]), )?--([a-z0-9-]+)([ =]<[^>]+>)?").unwrap();
    let short = regex::Regex::new(r"^\s+-([A-Za-z])(?:\s|$)").unwrap();
    let mut help = Help::default();
    let mut in_commands = false;
    for line in text.lines() {
        if !line.starts_with(' ') {
            in_commands = line.trim_end() == "Commands:";
            continue;
        }
        if in_commands {
            if let Some(c) = subcommand.captures(line) {
                help.subcommands.insert(c[1].to_string());
            }
        } else if let Some(c) = flag.captures(line) {
            let takes_value = c.get(3).is_some();
            help.flags.insert(format!("--{}", &c[2]), takes_value);
            if let Some(s) = c.get(1) {
                help.flags.insert(format!("-{}", s.as_str()), takes_value);
            }
        } else if let Some(c) = short.captures(line) {
            help.flags.insert(format!("-{}", &c[1]), false);
        }
    }
    help
}

/// A word of a shown command: quoted words are always values.
struct Word {
    text: String,
    quoted: bool,
}

/// Shell-like words of a command line, up to a comment; `[`, `]` and `…` of a synopsis dropped.
fn words(line: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        if first == '#' {
            break;
        }
        let mut text = String::new();
        let mut quoted = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '\'' || c == '"' {
                quoted = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    text.push(q);
                }
            } else {
                text.push(c);
            }
        }
        if !quoted {
            text = text.trim_matches(|c| c == '[' || c == ']' || c == '…').to_string();
            if text.is_empty() {
                continue;
            }
        }
        out.push(Word { text, quoted });
    }
    out
}

/// `reach skills list` for the path `["skills", "list"]`.
fn shown(path: &[String]) -> String {
    std::iter::once("reach").chain(path.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
}

/// Whether `reach` understands a command shown in the book; the reason when it does not.
fn check_command(cli: &mut Cli, line: &str) -> Result<(), String> {
    let words = words(line);
    assert_eq!(words.first().map(|w| w.text.as_str()), Some("reach"), "{line}");
    // `reach help run` is `reach run --help` (and `help` itself takes no `--help`).
    if words.get(1).is_some_and(|w| w.text == "help") && words.len() > 2 {
        let rest: Vec<&str> = words[2..].iter().map(|w| w.text.as_str()).collect();
        return check_command(cli, &format!("reach {} --help", rest.join(" ")));
    }
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    let mut positional = false;
    let mut value_next = false;
    // After a lone `|` a synopsis may show another subcommand of the same parent
    // (`reach memory list [--all] | search QUERY`).
    let mut sibling_next = false;
    for word in &words[1..] {
        let text = word.text.as_str();
        if value_next {
            value_next = false;
            continue;
        }
        if text == "|" {
            sibling_next = true;
            continue;
        }
        if std::mem::take(&mut sibling_next) && !text.starts_with('-') && !word.quoted {
            let parents: Vec<Vec<String>> =
                paths.iter().filter_map(|p| p.split_last().map(|(_, up)| up.to_vec())).collect();
            if !parents.is_empty() && parents.iter().all(|p| cli.help(p).subcommands.contains(text))
            {
                paths = parents
                    .into_iter()
                    .map(|mut p| {
                        p.push(text.to_string());
                        p
                    })
                    .collect();
                positional = false;
                continue;
            }
        }
        if word.quoted || text == "-" || text.chars().all(|c| c == '.') {
            positional = true;
            continue;
        }
        if matches!(text, "&&" | ";" | "||") || text.starts_with('>') || text.starts_with("2>") {
            break;
        }
        if let Some(flag) = text.strip_prefix('-') {
            let names: Vec<String> = match flag.strip_prefix('-') {
                Some(long) => vec![format!("--{}", long.split('=').next().unwrap_or(long))],
                None => flag.chars().map(|c| format!("-{c}")).collect(),
            };
            for path in &paths {
                let help = cli.help(path);
                for name in &names {
                    match help.flags.get(name) {
                        None => {
                            return Err(format!("`{}` has no {name}", shown(path)));
                        }
                        Some(&takes_value) => value_next = takes_value && !text.contains('='),
                    }
                }
            }
            continue;
        }
        let has_subcommands = paths.iter().any(|p| !cli.help(p).subcommands.is_empty());
        if positional || !has_subcommands {
            positional = true;
            continue;
        }
        // `list|search|show` and `list/show` show several subcommands at once.
        let alternatives: Vec<&str> = text.split(['|', '/']).collect();
        let mut next = Vec::new();
        for path in &paths {
            for alternative in &alternatives {
                if !cli.help(path).subcommands.contains(*alternative) {
                    return Err(format!("`{}` has no subcommand `{alternative}`", shown(path)));
                }
                let mut longer = path.clone();
                longer.push(alternative.to_string());
                next.push(longer);
            }
        }
        paths = next;
    }
    Ok(())
}

/// The `reach …` commands a document shows: command lines of its code blocks (after `$ ` or
/// `VAR=value`, with `\` continuations joined) and inline code that starts with `reach `.
fn shown_commands(text: &str) -> Vec<String> {
    let start =
        regex::Regex::new(r"^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(reach\s.*)$").unwrap();
    let mut out = Vec::new();
    for block in blocks(text) {
        match block {
            Block::Code(code) => {
                let mut lines = code.lines();
                while let Some(line) = lines.next() {
                    let Some(c) = start.captures(line) else { continue };
                    let mut command = c[1].to_string();
                    while command.ends_with('\\') {
                        command.pop();
                        command.push(' ');
                        command.push_str(lines.next().unwrap_or(""));
                    }
                    out.push(command);
                }
            }
            Block::Prose(prose) => {
                let (spans, _) = code_spans(&prose);
                for span in spans {
                    let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
                    // A table cell writes `|` as `\|`.
                    let span = span.replace("\\|", "|");
                    if span.starts_with("reach ") {
                        out.push(span);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_reach_command_the_book_and_the_readme_show_exists_with_its_flags() {
    let mut cli = Cli { binary: reach_binary(), helps: BTreeMap::new() };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        for command in shown_commands(&doc.text) {
            checked += 1;
            if let Err(reason) = check_command(&mut cli, &command) {
                wrong.push(format!("{}: `{command}`: {reason}", doc.name()));
            }
        }
    }
    assert!(checked > 50, "only {checked} commands found: is the scanner still reading the book?");
    assert!(wrong.is_empty(), "commands `reach` does not know:\n{}", wrong.join("\n"));
}

#[test]
fn the_command_check_refuses_what_reach_does_not_know() {
    let mut cli = Cli { binary: reach_binary(), helps: BTreeMap::new() };
    for line in [
        "reach skills list --json",
        "reach --policy /abs/reach.toml --skills /abs/skills mcp --http 127.0.0.1:8700",
        "reach memory list|search|show [--db PATH] [--json]",
        "reach memory list [--all] | search QUERY [--task-type T] | import FILE|-",
        "reach runs list/show",
        "reach call files.read '{\"path\": \"a b\"}' --yes # a comment --not-a-flag",
        "reach run \"TASK\" --provider openai|anthropic -vv",
        "reach help",
        "reach help memory search",
    ] {
        assert_eq!(check_command(&mut cli, line), Ok(()), "{line}");
    }
    for (line, reason) in [
        ("reach skills lsit", "`reach skills` has no subcommand `lsit`"),
        ("reach run \"TASK\" --no-such-flag", "`reach run` has no --no-such-flag"),
        ("reach memory list|purge", "`reach memory` has no subcommand `purge`"),
        ("reach nonsense", "`reach` has no subcommand `nonsense`"),
        ("reach memory list | search Q --all", "`reach memory search` has no --all"),
        ("reach help memory purge", "`reach memory` has no subcommand `purge`"),
    ] {
        assert_eq!(check_command(&mut cli, line), Err(reason.to_string()), "{line}");
    }
}

#[test]
fn heading_ids_are_computed_as_mdbook_and_github_compute_them() {
    let ids = heading_ids(
        "# Delegate to workers (`[agents.NAME]`, `--review`)\n```\n# not a heading\n```\n\
         ## Speed\n## Speed\n### The local model on the set (90% is not reached: blocked)\n",
    );
    let expected = [
        "delegate-to-workers-agentsname---review",
        "speed",
        "speed-1",
        "the-local-model-on-the-set-90-is-not-reached-blocked",
    ];
    assert_eq!(ids, expected.iter().map(|s| s.to_string()).collect());
}
