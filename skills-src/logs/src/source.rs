//! Opening the log a tool call names, with errors a model can act on.

use crate::reader::LineReader;
use crate::record::Format;
use agent_reach_sdk::fs::{self, Access};
use agent_reach_sdk::prelude::*;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Bytes read from the start of a file to recognise its format.
const HEAD: usize = 64 * 1024;

/// An opened log file.
struct Source {
    /// The file as an absolute path, for results and messages.
    path: PathBuf,
    file: File,
    /// The first bytes of the file.
    head: Vec<u8>,
}

impl Source {
    /// Open `path` (absolute, or relative to the host's working directory)
    /// for reading. Outside the grants this is `denied` with the grants
    /// listed; a folder or a compressed file is refused with what to do
    /// instead.
    fn open(tool: &str, path: &str) -> Result<Source, ToolError> {
        let path = fs::resolve(path);
        let fail = |err: io::Error| fs::io_error(Access::Read, &path, &err);
        // Checked before opening: opening a folder as a file fails with an
        // error that says less than this one.
        if std::fs::metadata(&path).map_err(fail)?.is_dir() {
            return Err(ToolError::invalid_arguments(format!(
                "{tool}: {} is a folder; give one log file (files.list shows what the folder \
                 holds)",
                path.display()
            )));
        }
        let mut file = File::open(&path).map_err(fail)?;
        let mut head = Vec::with_capacity(HEAD);
        (&mut file).take(HEAD as u64).read_to_end(&mut head).map_err(fail)?;
        if head.starts_with(&[0x1f, 0x8b])
            || head.starts_with(b"\x28\xb5\x2f\xfd")
            || head.starts_with(b"BZh")
        {
            return Err(ToolError::invalid_arguments(format!(
                "{tool}: {} is compressed (gzip, zstd or bzip2); these tools read uncompressed \
                 logs only — ask the user for the uncompressed file",
                path.display()
            )));
        }
        Ok(Source { path, file, head })
    }
}

/// Open the log at `path` for `tool` and stream it, from its start, through
/// `analyse` along with its format (`forced`, or recognised). Returns the
/// answer and the file's absolute path.
pub(crate) fn read_log<T>(
    tool: &str,
    path: &str,
    forced: Option<Format>,
    analyse: impl FnOnce(&mut LineReader<File>, Format) -> io::Result<T>,
) -> Result<(T, String), ToolError> {
    let Source { path, mut file, head } = Source::open(tool, path)?;
    let format = forced.unwrap_or_else(|| Format::detect(&head));
    drop(head);
    let answer = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| analyse(&mut LineReader::new(file), format))
        .map_err(|err| fs::io_error(Access::Read, &path, &err))?;
    Ok((answer, path.display().to_string()))
}
