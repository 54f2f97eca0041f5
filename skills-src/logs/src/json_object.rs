//! A lenient scanner over the top-level members of a JSON object.
//!
//! Log analysis needs a handful of top-level scalars per line, on millions
//! of lines. A full parser (`serde_json`) validates and decodes everything,
//! though a caller reads only a few scalars, and that work would dominate a
//! scan: here strings are found with a byte search for `"`, nested values are
//! skipped by counting brackets, and nothing is decoded until a caller asks
//! for a value. Being lenient is a feature for logs: invalid UTF-8 inside a
//! string does not reject the line.

use crate::find::find_byte;
use std::borrow::Cow;

/// A scalar member value, still in its JSON spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar<'a> {
    /// A string, with its quotes.
    Text(&'a [u8]),
    /// A number token, e.g. `-12.5e3`.
    Number(&'a [u8]),
}

impl<'a> Scalar<'a> {
    /// The value as bytes: a string's content (unescaped when it has
    /// escapes), a number's token.
    pub(crate) fn bytes(self) -> Cow<'a, [u8]> {
        match self {
            Scalar::Number(token) => Cow::Borrowed(token),
            Scalar::Text(quoted) => {
                let inner = &quoted[1..quoted.len() - 1];
                if find_byte(inner, b'\\').is_none() {
                    return Cow::Borrowed(inner);
                }
                // Rare enough to leave to serde_json; if it refuses (invalid
                // UTF-8 next to an escape), the raw text is still useful.
                match serde_json::from_slice::<String>(quoted) {
                    Ok(text) => Cow::Owned(text.into_bytes()),
                    Err(_) => Cow::Borrowed(inner),
                }
            }
        }
    }

    /// The value as an integer: a number (fractions dropped) or a string of
    /// digits (`"404"`).
    pub(crate) fn integer(self) -> Option<i64> {
        let token = match self {
            Scalar::Number(token) => token,
            Scalar::Text(quoted) => &quoted[1..quoted.len() - 1],
        };
        let text = std::str::from_utf8(token).ok()?.trim();
        text.parse::<i64>().ok().or_else(|| {
            let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
            // `as` saturates; the whole part is all a caller wants.
            Some(float as i64)
        })
    }
}

/// Call `member(key, value)` for each top-level member of the object that
/// is `line`, in order; `value` is `None` for objects, arrays, booleans and
/// null. Keys are passed as written (without quotes, escapes left as they
/// are). `None` when the line is not a JSON object.
pub(crate) fn members<'a>(
    line: &'a [u8],
    mut member: impl FnMut(&'a [u8], Option<Scalar<'a>>),
) -> Option<()> {
    let mut s = Scanner { text: line, at: 0 };
    s.skip_space();
    s.eat(b'{')?;
    s.skip_space();
    if s.peek() == Some(b'}') {
        s.at += 1;
    } else {
        loop {
            s.skip_space();
            let key = s.string()?;
            s.skip_space();
            s.eat(b':')?;
            s.skip_space();
            let value = s.value()?;
            member(&key[1..key.len() - 1], value);
            s.skip_space();
            match s.next()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.skip_space();
    (s.at == line.len()).then_some(())
}

/// A position in the text being scanned.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// A string starting here, with its quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            let quote = self.at + find_byte(&self.text[self.at..], b'"')?;
            self.at = quote + 1;
            // Escaped when preceded by an odd number of backslashes.
            let backslashes =
                self.text[start + 1..quote].iter().rev().take_while(|&&b| b == b'\\').count();
            if backslashes % 2 == 0 {
                return Some(&self.text[start..self.at]);
            }
        }
    }

    /// A value starting here: scalars are returned, the rest skipped.
    fn value(&mut self) -> Option<Option<Scalar<'a>>> {
        match self.peek()? {
            b'"' => self.string().map(|s| Some(Scalar::Text(s))),
            b'-' | b'0'..=b'9' => {
                let start = self.at;
                while matches!(self.peek(), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
                    self.at += 1;
                }
                Some(Some(Scalar::Number(&self.text[start..self.at])))
            }
            b'{' | b'[' => self.skip_nested().map(|()| None),
            _ => {
                for word in [&b"true"[..], b"false", b"null"] {
                    if self.text[self.at..].starts_with(word) {
                        self.at += word.len();
                        return Some(None);
                    }
                }
                None
            }
        }
    }

    /// Skip an object or array, strings inside it included.
    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Scalar, members};

    fn all(line: &[u8]) -> Option<Vec<(String, Option<Scalar<'_>>)>> {
        let mut out = Vec::new();
        members(line, |k, v| out.push((String::from_utf8_lossy(k).into_owned(), v)))?;
        Some(out)
    }

    #[test]
    fn scalars_and_skipped_values() {
        let line = concat!(
            r#" { "a" : "x\"y" , "n":-1.5e3, "o":{"k":["}",{"z":"]"}]}, "#,
            r#""t":true, "z":null, "b":[1,2] } "#
        );
        let got = all(line.as_bytes()).expect("an object");
        let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "n", "o", "t", "z", "b"]);
        assert_eq!(got[0].1.unwrap().bytes().as_ref(), b"x\"y");
        assert_eq!(got[1].1, Some(Scalar::Number(b"-1.5e3")));
        assert_eq!(got[1].1.unwrap().integer(), Some(-1500));
        assert!(got[2..].iter().all(|(_, v)| v.is_none()));
    }

    #[test]
    fn strings_decode_only_when_escaped() {
        assert!(matches!(
            Scalar::Text(br#""plain""#).bytes(),
            std::borrow::Cow::Borrowed(b"plain")
        ));
        assert_eq!(Scalar::Text(br#""a\nb\u00e9\\""#).bytes().as_ref(), "a\nbé\\".as_bytes());
        assert_eq!(Scalar::Text(br#""404""#).integer(), Some(404));
        assert_eq!(Scalar::Text(br#""abc""#).integer(), None);
    }

    #[test]
    fn invalid_utf8_in_a_string_is_kept() {
        let got = all(b"{\"msg\":\"bad \xff byte\"}").expect("still an object");
        assert_eq!(got[0].1.unwrap().bytes().as_ref(), b"bad \xff byte");
    }

    #[test]
    fn not_objects() {
        for line in [
            &b"[1,2]"[..],
            b"{\"level\":",
            b"{\"a\":1",
            b"{\"a\" 1}",
            b"{a:1}",
            b"{\"a\":1,}",
            b"{\"a\":\"unterminated}",
            b"{\"a\":nope}",
            b"{} trailing",
            b"plain text",
            b"",
        ] {
            assert!(all(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(all(b"{}"), Some(Vec::new()));
    }
}
