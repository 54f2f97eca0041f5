//! Reading a byte stream line by line in bounded pieces.
//!
//! `read` and `search` must cope with multi-gigabyte logs and with minified
//! files whose single "line" is hundreds of megabytes, inside a sandbox with a
//! memory limit. `BufRead::read_until` would buffer such a line whole, so this
//! reader never holds more than the caller's cap of one line, and can skip or
//! count lines without keeping their bytes at all.

use std::io::{self, BufRead};

/// A line, for counting purposes, is a run of bytes ended by `\n`, or the
/// non-empty run after the last `\n`. So `"a\nb"` and `"a\nb\n"` both have two
/// lines and the empty file has none — what editors and `wc -l` users expect.
pub(crate) struct Lines<R> {
    reader: R,
    /// 0-based index of the line the next byte belongs to.
    line: usize,
    /// Whether bytes of the current line have already been consumed, so
    /// that end of input completes a line instead of being "no line".
    mid_line: bool,
}

/// Where a piece returned by [`Lines::read_piece`] belongs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    /// 0-based index of the line the bytes came from.
    pub line: usize,
    /// Whether the piece reached the end of its line (the `\n`, which is
    /// included, or the end of input). `false` means the cap cut it.
    pub ends_line: bool,
}

impl<R: BufRead> Lines<R> {
    /// Start reading at the beginning of `reader`.
    pub(crate) fn new(reader: R) -> Self {
        Lines { reader, line: 0, mid_line: false }
    }

    /// Append bytes of the current line to `out`, up to and including its
    /// `\n`, but never beyond `max` bytes in `out`. Returns `None` at the end
    /// of input when no line is in progress.
    pub(crate) fn read_piece(
        &mut self,
        out: &mut Vec<u8>,
        max: usize,
    ) -> io::Result<Option<Piece>> {
        let line = self.line;
        let start = out.len();
        loop {
            let room = max.saturating_sub(out.len());
            if room == 0 {
                self.mid_line = true;
                return Ok(Some(Piece { line, ends_line: false }));
            }
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if self.mid_line || out.len() > start {
                    self.finish_line();
                    return Ok(Some(Piece { line, ends_line: true }));
                }
                return Ok(None);
            }
            let window = &buf[..buf.len().min(room)];
            if let Some(at) = window.iter().position(|&b| b == b'\n') {
                out.extend_from_slice(&window[..=at]);
                self.reader.consume(at + 1);
                self.finish_line();
                return Ok(Some(Piece { line, ends_line: true }));
            }
            let taken = window.len();
            out.extend_from_slice(window);
            self.reader.consume(taken);
            self.mid_line = true;
        }
    }

    /// Consume the rest of the current line without keeping it. Returns
    /// `false` when the input had already ended and no line was in progress.
    pub(crate) fn skip_line(&mut self) -> io::Result<bool> {
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if self.mid_line {
                    self.finish_line();
                    return Ok(true);
                }
                return Ok(false);
            }
            if let Some(at) = buf.iter().position(|&b| b == b'\n') {
                self.reader.consume(at + 1);
                self.finish_line();
                return Ok(true);
            }
            let taken = buf.len();
            self.reader.consume(taken);
            self.mid_line = true;
        }
    }

    /// Read to the end of input, counting lines a buffer at a time instead of
    /// line by line: this is what makes `total_lines` cheap on huge files.
    pub(crate) fn count_rest(&mut self) -> io::Result<usize> {
        loop {
            let buf = self.reader.fill_buf()?;
            let Some(&last) = buf.last() else { break };
            self.line += buf.iter().filter(|&&b| b == b'\n').count();
            self.mid_line = last != b'\n';
            let taken = buf.len();
            self.reader.consume(taken);
        }
        if self.mid_line {
            self.finish_line();
        }
        Ok(self.line)
    }

    fn finish_line(&mut self) {
        self.line += 1;
        self.mid_line = false;
    }
}

/// `bytes` without its trailing `\n` or `\r\n`.
pub(crate) fn strip_newline(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// The longest prefix of `text` that fits in `max` bytes without splitting a
/// character, so a cut never produces invalid UTF-8 or a stray `�`.
pub(crate) fn cut_at(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}
