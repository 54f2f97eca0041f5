//! Whether an answer rests on what the run saw. A small model that listed a
//! folder names a file it never read, or quotes a URL it made up; the
//! names it cites can be checked against the task and the tool results.

/// File extensions that mark a word as a file name.
const FILE_EXTENSIONS: &str = "md|txt|log|json|jsonl|csv|tsv|html|htm|toml|yaml|yml|xml|rs|py|\
                               js|ts|conf|cfg|ini|pdf|png|jpg|gz|zip|sh";

/// File names and URLs in `answer` that neither `task` nor any of
/// `results` contains (case-insensitive; a file counts as seen when its
/// base name was), in the order they appear.
pub fn unsupported(answer: &str, task: &str, results: &[String]) -> Vec<String> {
    let mut seen = task.to_lowercase();
    for result in results {
        seen.push('\n');
        seen.push_str(&result.to_lowercase());
    }
    let mut out: Vec<String> = Vec::new();
    let urls = regex::Regex::new(r#"https?://[^\s<>"'`)\]]+"#).expect("valid");
    for m in urls.find_iter(answer) {
        let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
        if !seen.contains(&url.trim_end_matches('/').to_lowercase())
            && !out.iter().any(|o| o == url)
        {
            out.push(url.to_owned());
        }
    }
    let without_urls = urls.replace_all(answer, " ");
    let files =
        regex::Regex::new(&format!(r"(?i)\b[\w][\w./-]*\.(?:{FILE_EXTENSIONS})\b")).expect("valid");
    for m in files.find_iter(&without_urls) {
        let name = m.as_str();
        let base = name.rsplit('/').next().unwrap_or(name).to_lowercase();
        if !seen.contains(&base) && !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_no_result_showed_are_unsupported() {
        let results = vec![r#"{"entries": [{"name": "todo.md"}, {"name": "plan.md"}]}"#.to_owned()];
        let answer = "The newest report is report-2024-05.md; see notes/todo.md, \
                      https://example.com/x. and http://h/given.";
        assert_eq!(
            unsupported(answer, "Look at http://h/given", &results),
            ["https://example.com/x", "report-2024-05.md"]
        );
        assert!(
            unsupported("Version 2.5 is out, e.g. today.", "", &[]).is_empty(),
            "numbers and abbreviations are not files"
        );
    }
}
