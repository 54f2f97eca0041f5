//! Writing a recording: entries appended as they happen, bodies and
//! results kept once each by content, within the run's budget. A recording
//! that cannot be written never stops the run: the failure is logged, and
//! a replay that needs what is missing says so.

use super::{Entry, Exchange};
use crate::runtime::redact::Redactor;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A run's recording being written.
pub struct Recorder {
    dir: PathBuf,
    redactor: Redactor,
    state: Mutex<State>,
}

struct State {
    file: Option<File>,
    used: u64,
    max_bytes: u64,
    full: bool,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Recorder {
    /// The recording of run `run_id` under `root` (made on its first
    /// entry), keeping at most `max_bytes` of bodies and results, masking
    /// `secrets` in everything.
    pub fn new(root: &Path, run_id: &str, max_bytes: u64, secrets: Vec<String>) -> Recorder {
        Recorder::masking(root, run_id, max_bytes, Redactor::new(secrets))
    }

    pub(crate) fn masking(
        root: &Path,
        run_id: &str,
        max_bytes: u64,
        redactor: Redactor,
    ) -> Recorder {
        let state = State { file: None, used: 0, max_bytes, full: false };
        Recorder { dir: root.join(run_id), redactor, state: Mutex::new(state) }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `text` with the run's secrets masked (a URL, a header value).
    pub(crate) fn mask(&self, text: &str) -> String {
        self.redactor.text(text).into_owned()
    }

    /// The result the model got for `call` of `tool`.
    pub fn result(&self, call: &str, tool: &str, text: &str) {
        let text = self.redactor.text(text);
        let bytes = text.len() as u64;
        let entry =
            |blob| Entry::Result { call: call.to_owned(), tool: tool.to_owned(), blob, bytes };
        self.write(text.as_bytes(), entry);
    }

    /// A response a skill got (`exchange`), with the body it read; `None`
    /// when the body alone was past the budget (`exchange.body_bytes` says
    /// how long it was).
    pub fn exchange(&self, mut exchange: Exchange, body: Option<&[u8]>) {
        let Some(body) = body else {
            self.write_over(|blob| Entry::Http(Exchange { blob, ..exchange }));
            return;
        };
        let body = self.redactor.bytes(body);
        exchange.body_bytes = body.len() as u64;
        self.write(&body, |blob| Entry::Http(Exchange { blob, ..exchange }));
    }

    /// What `call`'s skill read from the wall clock (nanoseconds since the
    /// epoch, in order). Small and bounded ([`super::MAX_CLOCK_READS`]), so
    /// kept past the budget too.
    pub fn clock(&self, call: &str, reads: Vec<u64>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.append(&mut state, &Entry::Clock { call: call.to_owned(), reads });
    }

    /// The most bytes it keeps: a body longer than this is not collected.
    pub fn max_bytes(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).max_bytes
    }

    /// An entry whose content is past the budget.
    fn write_over(&self, entry: impl FnOnce(Option<String>) -> Entry) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.mark_full(&mut state);
        self.append(&mut state, &entry(None));
    }

    fn mark_full(&self, state: &mut State) {
        if !state.full {
            state.full = true;
            let max_bytes = state.max_bytes;
            self.append(state, &Entry::Full { max_bytes });
        }
    }

    /// Keep `content` (when it fits) and append the entry made of its blob.
    fn write(&self, content: &[u8], entry: impl FnOnce(Option<String>) -> Entry) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fits = !state.full && state.used + content.len() as u64 <= state.max_bytes;
        let blob = if fits {
            match self.blob(content) {
                Ok(name) => {
                    state.used += content.len() as u64;
                    Some(name)
                }
                Err(err) => {
                    tracing::warn!("recording {}: a body was not kept: {err}", self.dir.display());
                    None
                }
            }
        } else {
            None
        };
        if !fits {
            self.mark_full(&mut state);
        }
        self.append(&mut state, &entry(blob));
    }

    fn blob(&self, content: &[u8]) -> io::Result<String> {
        let name = blake3::hash(content).to_hex().to_string();
        let dir = self.dir.join("blobs");
        crate::private_fs::create_dir_all(&dir)?;
        let path = dir.join(&name);
        if !path.exists() {
            let partial = dir.join(format!(".{name}.part"));
            // Left by a recorder that died mid-write.
            let _ = std::fs::remove_file(&partial);
            let mut file = crate::private_fs::create_new_append(&partial)?;
            // Not synced: a recording lost to a crash costs a replay, not
            // the user's data (the journal, which undo needs, is synced).
            file.write_all(content)?;
            std::fs::rename(&partial, &path)?;
        }
        Ok(name)
    }

    fn append(&self, state: &mut State, entry: &Entry) {
        let written = (|| -> io::Result<()> {
            if state.file.is_none() {
                crate::private_fs::create_dir_all(&self.dir)?;
                state.file =
                    Some(crate::private_fs::create_new_append(&self.dir.join("tape.jsonl"))?);
            }
            let mut line = serde_json::to_string(entry).map_err(io::Error::other)?;
            line.push('\n');
            let file = state.file.as_mut().expect("opened above");
            file.write_all(line.as_bytes())?;
            file.flush()
        })();
        if let Err(err) = written {
            tracing::warn!("recording {}: an entry was not written: {err}", self.dir.display());
        }
    }
}
