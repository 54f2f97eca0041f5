//! Where a note comes from: a quote of the person (whole sentences, word
//! for word), a tool result that holds its words, or a rewording of the
//! person that is never theirs. Pure text work, tested beside it.

use crate::text::shorten_chars;

/// Share of a note's words that must appear in one result for the result
/// to be its source (and in a person's message for the note to be called
/// a rewording of it).
pub(super) const COVERAGE: f64 = 0.7;

/// Words too common to say where a note came from.
const STOPWORDS: &[&str] = &[
    "about", "after", "also", "always", "been", "before", "from", "have", "into", "just", "like",
    "more", "must", "never", "note", "only", "please", "remember", "should", "some", "than",
    "that", "their", "them", "then", "there", "they", "this", "user", "users", "what", "when",
    "where", "which", "will", "with", "would", "your",
];

/// Most sentences of the person's a refused rewording is told to quote.
const HINT_SENTENCES: usize = 3;

/// Where a note's words were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Quoted from a message the person wrote, at this step ([`quotes`]).
    Person {
        /// The step (1 for the task).
        step: usize,
    },
    /// In the result of `results[index]`.
    Result {
        /// Index into the candidates given.
        index: usize,
    },
    /// Most of its words are in a message the person wrote, but it does
    /// not quote it: the model's rewording, or someone else's words that
    /// share the person's. Never the person's.
    Reworded {
        /// The step of the message.
        step: usize,
        /// The sentences of that message the note shares words with, as
        /// written: what the model could quote instead.
        sentences: Vec<String>,
    },
}

/// Where the note (`text`, about `subject`) comes from: a quote of one of
/// `person` (their messages, by step), else the one of `results` (tool
/// results) that holds most of its words — with the subject's, or without —
/// else a message of the person's that holds most of them (a rewording).
/// `None` when nothing does.
pub fn source_of(
    subject: &str,
    text: &str,
    person: &[(usize, &str)],
    results: &[&str],
) -> Option<Found> {
    if let Some((step, _)) = person.iter().find(|(_, message)| quotes(message, text)) {
        return Some(Found::Person { step: (*step).max(1) });
    }
    let best = |note: &str| {
        results
            .iter()
            .enumerate()
            .map(|(i, result)| (coverage(note, result), i))
            .filter(|(c, _)| *c >= COVERAGE)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, index)| Found::Result { index })
    };
    if let Some(found) = best(&format!("{subject} {text}")).or_else(|| best(text)) {
        return Some(found);
    }
    let (step, message) = person.iter().find(|(_, message)| coverage(text, message) >= COVERAGE)?;
    let telling = words(text);
    let sentences = split_sentences(message)
        .into_iter()
        .filter(|s| words(s).iter().any(|w| telling.iter().any(|t| same_word(t, w))))
        .take(HINT_SENTENCES)
        .map(|s| shorten_chars(s, 300))
        .collect();
    Some(Found::Reworded { step: (*step).max(1), sentences })
}

/// True when `note` is one or more whole, consecutive sentences of
/// `message`, word for word. Both are compared in lower case, with runs of
/// whitespace as one space, curly quotes as straight ones, and the marks
/// around each sentence (quotes, brackets, a list's dash, a closing `.` or
/// `!`) left out — none of which changes what a sentence says. A `?` stays
/// ("Overwrite existing files?" asks; "Overwrite existing files." tells),
/// and so does every word: a note cut out of a sentence ("overwrite
/// existing files" from "do not overwrite existing files") is no quote.
pub fn quotes(message: &str, note: &str) -> bool {
    let normalised = |text: &str| -> Vec<String> {
        split_sentences(text).into_iter().map(normalise).filter(|s| !s.is_empty()).collect()
    };
    let (said, note) = (normalised(message), normalised(note));
    !note.is_empty() && said.windows(note.len()).any(|run| run == note.as_slice())
}

/// `text` cut into sentences: after a `.`, `!`, `?` or `…` that ends a
/// word (followed by whitespace or the end), and at line breaks. A URL or
/// a path holds no sentence end (`example.com`, `notes/a.md` go on), so the
/// words of a link in the task cannot make a sentence of their own.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\n' | '\r' => Some(i),
            '.' | '!' | '?' | '…' if chars.peek().is_none_or(|(_, next)| next.is_whitespace()) => {
                Some(i + c.len_utf8())
            }
            _ => None,
        };
        if let Some(end) = end {
            out.push(text[start..end].trim());
            start = chars.peek().map_or(text.len(), |(j, _)| *j);
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// One sentence as [`quotes`] compares it.
fn normalise(sentence: &str) -> String {
    let straight: String = sentence
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{ab}'
            | '\u{bb}' => '"',
            _ => c,
        })
        .collect();
    let spaced = straight.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let around = |c: char| {
        matches!(
            c,
            '"' | '\''
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '*'
                | '_'
                | '`'
                | '-'
                | '\u{2022}'
                | '>'
                | ':'
                | ';'
                | ','
                | '.'
                | '!'
                | '…'
        ) || c.is_whitespace()
    };
    spaced.trim_matches(around).to_owned()
}

/// Share of `note`'s telling words that `text` holds (0 without any).
pub(super) fn coverage(note: &str, text: &str) -> f64 {
    let words = words(note);
    if words.is_empty() {
        return 0.0;
    }
    let have = self::words(text);
    let hit = words.iter().filter(|w| have.iter().any(|h| same_word(w, h))).count();
    hit as f64 / words.len() as f64
}

/// The telling words of `text`: lower case, four letters or more, common
/// words left out, each once.
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase) {
        if w.chars().count() >= 4 && !STOPWORDS.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The same word, give or take an ending (`prefer`/`prefers`, `save`/`saved`).
fn same_word(a: &str, b: &str) -> bool {
    let stem = |w: &str| w.chars().take(5).collect::<String>();
    a == b || (a.chars().count() >= 5 && b.chars().count() >= 5 && stem(a) == stem(b))
}

#[cfg(test)]
mod tests;
