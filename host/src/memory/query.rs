//! Turning what a user or a model typed into an FTS5 query that means
//! exactly "any of these words".
//!
//! FTS5 has its own syntax (`AND`, `NEAR(…)`, `col:`, `*`, `^`, quotes,
//! parentheses); a query passed through would fail on a stray quote, or
//! search a column or a prefix nobody asked for. So the text is cut into
//! words the way FTS5's `unicode61` tokenizer cuts it (letters and digits;
//! everything else separates), each word is quoted, and the words are
//! joined with `OR`. Bm25 then ranks entries with more and rarer words first.

/// Most words taken from a query: a whole task description is a fine query,
/// a pasted page is cut short rather than made into a slow one.
const MAX_TERMS: usize = 24;

/// Words too common to say anything about which entry is meant; each would
/// match most of the store and make a search slow without making it better.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "do", "does", "for", "from", "had", "has", "have", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "one", "or", "our",
    "please", "should", "so", "that", "the", "their", "them", "then", "there", "these", "this",
    "to", "up", "us", "was", "we", "what", "when", "where", "which", "will", "with", "would",
    "you", "your",
];

/// The words of `query` that a search looks for: lower case, in order,
/// without repeats, without one-letter words and common English words
/// ("the", "with"), at most 24. An empty list means there is nothing to
/// search for.
pub fn search_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() < 2 || STOPWORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    terms
}

/// Entries a word may be in and still be searched for by rank: a word held
/// by more says little about which entry is meant and makes ranking slow
/// (both stores leave it out of the ranking).
#[cfg(any(feature = "memory-sqlite", feature = "memory-postgres", test))]
pub(super) const COMMON: i64 = 500;

/// Matches read before the task type reorders them.
#[cfg(any(feature = "memory-sqlite", feature = "memory-postgres", test))]
pub(super) const CANDIDATES: usize = 50;

/// Ranked matches, then those of `task_type` first (each group keeping its
/// order), at most `limit`: the last step of both stores' search.
#[cfg(any(feature = "memory-sqlite", feature = "memory-postgres", test))]
pub(super) fn task_type_first(
    mut entries: Vec<super::Entry>,
    task_type: Option<&str>,
    limit: usize,
) -> Vec<super::Entry> {
    let task_type = task_type.map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty());
    if let Some(wanted) = task_type {
        // A stable sort: each group keeps its rank order.
        entries.sort_by_key(|e| e.task_type.as_deref() != Some(wanted.as_str()));
    }
    entries.truncate(limit);
    entries
}

/// The FTS5 `MATCH` expression for entries holding any of `terms` (words
/// from [`search_terms`]).
#[cfg(any(feature = "memory-sqlite", test))]
pub(super) fn any_of(terms: &[String]) -> String {
    joined(terms, " OR ")
}

/// The FTS5 `MATCH` expression for entries holding all of `terms`.
#[cfg(any(feature = "memory-sqlite", test))]
pub(super) fn all_of(terms: &[String]) -> String {
    joined(terms, " AND ")
}

#[cfg(any(feature = "memory-sqlite", test))]
fn joined(terms: &[String], operator: &str) -> String {
    // Words hold only letters and digits, so none contains a quote; quoting
    // makes `OR`, `NEAR` and friends plain words.
    terms.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(operator)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (query, expected MATCH expression)
    const CASES: &[(&str, Option<&str>)] = &[
        ("staging API", Some(r#""staging" OR "api""#)),
        (
            "Save https://example.com/post as Markdown",
            Some(r#""save" OR "https" OR "example" OR "com" OR "post" OR "markdown""#),
        ),
        ("", None),
        ("   ", None),
        ("?!* -- () \"\" ^:", None),
        ("the and of a", None),
        ("x y z", None),
        ("\"unbalanced", Some(r#""unbalanced""#)),
        ("NEAR(a b)", Some(r#""near""#)),
        ("subject:secret*", Some(r#""subject" OR "secret""#)),
        ("api OR NOT deploy AND x", Some(r#""api" OR "deploy""#)),
        ("Api api API", Some(r#""api""#)),
        ("café Ünïcode 東京", Some(r#""café" OR "ünïcode" OR "東京""#)),
        ("snake_case-word", Some(r#""snake" OR "case" OR "word""#)),
        ("v2 42", Some(r#""v2" OR "42""#)),
    ];

    #[test]
    fn queries_become_quoted_words_joined_with_or() {
        for &(query, expected) in CASES {
            let terms = search_terms(query);
            let expression = (!terms.is_empty()).then(|| any_of(&terms));
            assert_eq!(expression.as_deref(), expected, "query {query:?}");
        }
        let terms = search_terms("deploy NEAR staging");
        assert_eq!(all_of(&terms), r#""deploy" AND "near" AND "staging""#);
    }

    #[test]
    fn a_long_query_is_cut_to_the_first_words() {
        let query: String = (0..100).map(|i| format!("word{i} ")).collect();
        let terms = search_terms(&query);
        assert_eq!(terms.len(), MAX_TERMS);
        assert_eq!(terms[0], "word0");
    }
}
