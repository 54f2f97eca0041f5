//! Streaming a file line by line with bounded memory and no per-line copy.
//!
//! Logs run to gigabytes and the sandbox has a memory limit, so the reader
//! keeps one buffer and hands out lines as slices of it: a line is copied
//! only when it straddles two reads (moved to the buffer's front). A line
//! longer than [`MAX_LINE`] is handed out cut at that length and the rest of
//! it is skipped, so one minified blob cannot grow the buffer without end.

use crate::find::find_byte;
use std::io::{self, Read};

/// Bytes asked of the file per read: large enough that the cost of a call
/// across the sandbox boundary disappears in the scanning work.
const CHUNK: usize = 256 * 1024;
/// Longest line handed out whole; longer lines are cut (and flagged).
pub(crate) const MAX_LINE: usize = 1024 * 1024;

/// One line, without its `\n` or `\r\n`.
#[derive(Debug)]
pub(crate) struct Line<'a> {
    /// 1-based line number, as editors show it.
    pub number: u64,
    /// The bytes of the line (the first [`MAX_LINE`] of them when `cut`).
    pub text: &'a [u8],
    /// Whether the line was longer than [`MAX_LINE`] and has been cut.
    pub cut: bool,
}

/// Hands out the lines of a byte stream one at a time.
pub(crate) struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// The previous line was cut: its rest must be skipped first.
    skipping: bool,
    lines: u64,
    bytes: u64,
}

impl<R: Read> LineReader<R> {
    /// Read `inner` from its current position.
    pub(crate) fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
            skipping: false,
            lines: 0,
            bytes: 0,
        }
    }

    /// Lines handed out so far.
    pub(crate) fn lines(&self) -> u64 {
        self.lines
    }

    /// Bytes consumed so far, newlines and skipped rests of cut lines included;
    /// at the end of input this is the size of what was read.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The next line, or `None` at the end of input. A final line without
    /// `\n` still counts; an empty input has no lines.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if self.skipping {
            self.skip_rest()?;
        }
        // Bytes of the pending line already searched for `\n`, so a line
        // that needs several reads is not searched again from its start.
        let mut searched = 0;
        loop {
            let found = find_byte(&self.buf[self.start + searched..self.end], b'\n');
            if let Some(at) = found {
                let end = self.start + searched + at;
                return Ok(Some(self.take(end, end + 1, false)));
            }
            searched = self.end - self.start;
            if searched >= MAX_LINE {
                self.skipping = true;
                let end = self.start + MAX_LINE;
                return Ok(Some(self.take(end, end, true)));
            }
            if self.eof {
                if searched == 0 {
                    return Ok(None);
                }
                let end = self.end;
                return Ok(Some(self.take(end, end, false)));
            }
            self.fill()?;
        }
    }

    /// Hand out `buf[start..end]` as a line and consume up to `next`.
    fn take(&mut self, end: usize, next: usize, cut: bool) -> Line<'_> {
        let start = self.start;
        self.bytes += (next - start) as u64;
        self.start = next;
        self.lines += 1;
        let mut text = &self.buf[start..end];
        if !cut {
            text = text.strip_suffix(b"\r").unwrap_or(text);
        }
        if self.lines == 1 {
            // A UTF-8 byte order mark is not part of the first line's text;
            // left in, it would hide a leading timestamp or `{`.
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        Line { number: self.lines, text, cut }
    }

    /// Consume the rest of a cut line, through its `\n`.
    fn skip_rest(&mut self) -> io::Result<()> {
        loop {
            if let Some(at) = find_byte(&self.buf[self.start..self.end], b'\n') {
                self.bytes += at as u64 + 1;
                self.start += at + 1;
                break;
            }
            self.bytes += (self.end - self.start) as u64;
            self.start = self.end;
            if self.eof {
                break;
            }
            self.fill()?;
        }
        self.skipping = false;
        Ok(())
    }

    /// Move the pending bytes to the front and read more after them,
    /// growing the buffer only while a single line needs it.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < CHUNK / 4 {
            let size = (self.buf.len() * 2).min(MAX_LINE + CHUNK);
            self.buf.resize(size, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `step` bytes per read, to exercise
    /// lines that straddle reads.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.data.len().min(self.step).min(out.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn collect(data: &[u8], step: usize) -> (Vec<(u64, Vec<u8>, bool)>, u64) {
        let mut reader = LineReader::new(Trickle { data, step });
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push((line.number, line.text.to_vec(), line.cut));
        }
        (out, reader.bytes())
    }

    #[test]
    fn lines_end_at_newlines_and_at_the_end_of_input() {
        for step in [1, 3, 7, CHUNK] {
            let (lines, bytes) = collect(b"one\r\ntwo\n\nlast", step);
            let texts: Vec<&[u8]> = lines.iter().map(|l| &l.1[..]).collect();
            assert_eq!(texts, [&b"one"[..], b"two", b"", b"last"], "step {step}");
            assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), [1, 2, 3, 4]);
            assert_eq!(bytes, 14);
        }
        assert!(collect(b"", 4).0.is_empty());
        assert_eq!(collect(b"a\n", 4).0.len(), 1, "a trailing newline makes no extra line");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_the_first_line_only() {
        let (lines, bytes) = collect(b"\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBFx\n", 5);
        assert_eq!(lines[0].1, b"{\"a\":1}");
        assert_eq!(lines[1].1, b"\xEF\xBB\xBFx");
        assert_eq!(bytes, 16);
    }

    #[test]
    fn an_over_long_line_is_cut_and_its_rest_skipped() {
        let mut data = vec![b'x'; MAX_LINE * 2 + 10];
        data.extend_from_slice(b"\nnext\n");
        let (lines, bytes) = collect(&data, 100_000);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].1.len(), MAX_LINE);
        assert!(lines[0].2, "flagged as cut");
        assert_eq!((lines[1].0, &lines[1].1[..], lines[1].2), (2, &b"next"[..], false));
        assert_eq!(bytes, data.len() as u64, "skipped bytes still count");
    }

    #[test]
    fn an_over_long_last_line_without_newline_ends_cleanly() {
        let data = vec![b'y'; MAX_LINE + 5];
        let (lines, bytes) = collect(&data, CHUNK);
        assert_eq!(lines.len(), 1);
        assert_eq!(bytes, data.len() as u64);
    }
}
