//! Cutting text to a size for messages, logs and prompts, always on a
//! character boundary and marked with `…` where something was left out.

/// `text` whole, or its first `max_chars` characters followed by `…`.
pub fn shorten_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `text` whole, or at most `max_bytes` bytes of it followed by `…`: for
/// limits on size rather than on what a reader sees.
pub(crate) fn shorten_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// `text` made safe to show on a terminal: control characters (C0, DEL,
/// C1), and the invisible characters that reorder or hide text (bidi
/// overrides and isolates, zero-width characters, the BOM) are written as
/// escapes (`\n`, `\t`, `\r`, `\u{1b}`), and a backslash as `\\`, so a
/// value can neither move the cursor, redraw a prompt line, nor pass one
/// text off as another.
pub fn escape_for_terminal(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' if keep_lines => out.push(c),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || is_invisible_format(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)))
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters a terminal shows as nothing (or that change how the text
/// around them is shown): Unicode's format characters and the other
/// default-ignorable code points — soft hyphen, bidi marks, overrides and
/// isolates, zero-width characters, line and paragraph separators, fillers,
/// variation selectors, tag characters (which can carry a hidden message).
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// A value for a person to judge: escaped for the terminal, and when longer
/// than `max_chars`, its beginning and its end with the full length stated
/// between them — so what is shown is never mistaken for the whole of it,
/// and a payload after a run of padding still shows.
pub(crate) fn shown_value(text: &str, max_chars: usize) -> String {
    let escaped: Vec<char> = escape_for_terminal(text).chars().collect();
    if escaped.len() <= max_chars {
        return escaped.into_iter().collect();
    }
    let total = text.chars().count();
    let tail = max_chars / 4;
    let head: String = escaped[..max_chars - tail].iter().collect();
    let end: String = escaped[escaped.len() - tail..].iter().collect();
    format!("{head} … [{total} characters in full] … {end}")
}

/// `text` escaped like [`escape_for_terminal`], except that line breaks
/// and tabs stay as they are: for multi-line text a person reads (a model's
/// answer, a skill's instructions).
pub fn escape_keeping_lines(text: &str) -> String {
    escape(text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(shorten_chars("héllo", 5), "héllo");
        assert_eq!(shorten_chars("héllo", 2), "hé…");
        assert_eq!(shorten_bytes("héllo", 6), "héllo");
        assert_eq!(shorten_bytes("héllo", 2), "h…", "é is two bytes: cut before it");
    }

    /// (value, as shown)
    const ESCAPES: &[(&str, &str)] = &[
        ("notes/a.md", "notes/a.md"),
        ("héllo wörld", "héllo wörld"),
        ("a\nb", "a\\nb"),
        ("line1\nline2", "line1\\nline2"),
        ("a\tb\rc", "a\\tb\\rc"),
        ("\u{1b}[2K\rRun it? [y/N] y", "\\u{1b}[2K\\rRun it? [y/N] y"),
        ("\u{7}bell", "\\u{7}bell"),
        ("del\u{7f}", "del\\u{7f}"),
        ("c1\u{9b}31m", "c1\\u{9b}31m"),
        ("evil\u{202e}txt.exe", "evil\\u{202e}txt.exe"),
        ("zero\u{200b}width", "zero\\u{200b}width"),
        ("iso\u{2066}late", "iso\\u{2066}late"),
        ("LGTM\u{e0041}\u{e0042}", "LGTM\\u{e0041}\\u{e0042}"),
        ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
        ("line\u{2028}sep", "line\\u{2028}sep"),
        ("vs\u{fe0f}", "vs\\u{fe0f}"),
        ("back\\slash", "back\\\\slash"),
    ];

    #[test]
    fn values_shown_to_a_person_cannot_redraw_the_terminal() {
        for &(value, shown) in ESCAPES {
            assert_eq!(escape_for_terminal(value), shown, "{value:?}");
            assert!(!escape_for_terminal(value).chars().any(char::is_control), "{value:?}");
        }
    }

    #[test]
    fn long_values_are_cut_with_their_full_length() {
        assert_eq!(shown_value("short", 10), "short");
        let long = format!("{}PAYLOAD", " ".repeat(5_000));
        assert_eq!(
            shown_value(&long, 8),
            "       … [5007 characters in full] … AD",
            "the end shows too"
        );
        assert_eq!(
            shown_value("a\nbcdefgh", 4),
            "a\\n … [9 characters in full] … h",
            "cut after escaping: no raw control character survives"
        );
        assert_eq!(escape_keeping_lines("one\n\ttwo\u{1b}[2K"), "one\n\ttwo\\u{1b}[2K");
    }
}
