//! Reading a recording back: the responses each call got, handed out in
//! the order they came, and the results the model got.

use super::{Entry, Exchange, TAPE_DIR};
use crate::runtime::redact::Redactor;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A run's recording, being replayed.
pub struct Tape {
    dir: PathBuf,
    /// Responses not yet handed out, by call, in order.
    exchanges: Mutex<HashMap<String, Vec<Exchange>>>,
    /// The results the model got, by call: the tool and the text (`None`:
    /// over the budget).
    results: HashMap<String, (String, Option<String>)>,
    /// The budget ran out while recording.
    full: bool,
    /// Wall-clock readings not yet given, by call.
    clocks: Mutex<HashMap<String, Vec<u64>>>,
    /// Requests the recording could not answer, as `call: METHOD URL`.
    missed: Mutex<Vec<String>>,
    redactor: Redactor,
}

impl std::fmt::Debug for Tape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tape").field("dir", &self.dir).finish_non_exhaustive()
    }
}

/// A recorded response, ready to hand to a skill again.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// What was recorded of it.
    pub exchange: Exchange,
    /// Its body as the skill read it; `None` when it was not kept.
    pub body: Option<Vec<u8>>,
}

impl Tape {
    /// The recording of run `run_id` under `root` (`<runs>/recordings`),
    /// matching requests with `secrets` masked as they were when
    /// recorded. A run without one (it made no call, or ran before
    /// recordings existed) reads as empty.
    pub fn load(root: &Path, run_id: &str, secrets: Vec<String>) -> io::Result<Tape> {
        let dir = root.join(run_id);
        let text = match std::fs::read_to_string(dir.join("tape.jsonl")) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut exchanges: HashMap<String, Vec<Exchange>> = HashMap::new();
        let mut results = HashMap::new();
        let mut full = false;
        let mut clocks: HashMap<String, Vec<u64>> = HashMap::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let entry: Entry = serde_json::from_str(line).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}:{}: {e}", dir.join("tape.jsonl").display(), n + 1),
                )
            })?;
            match entry {
                Entry::Http(exchange) => {
                    exchanges.entry(exchange.call.clone()).or_default().push(exchange)
                }
                Entry::Result { call, tool, blob, .. } => {
                    let text = match blob {
                        Some(name) => Some(read_blob(&dir, &name)?),
                        None => None,
                    };
                    let text = text.map(|b| String::from_utf8_lossy(&b).into_owned());
                    results.insert(call, (tool, text));
                }
                Entry::Clock { call, reads } => clocks.entry(call).or_default().extend(reads),
                Entry::Full { .. } => full = true,
            }
        }
        Ok(Tape {
            dir,
            exchanges: Mutex::new(exchanges),
            results,
            clocks: Mutex::new(clocks),
            full,
            missed: Mutex::default(),
            redactor: Redactor::new(secrets),
        })
    }

    /// The recording of the run whose audit log is `log`.
    pub fn of_log(log: &Path, run_id: &str, secrets: Vec<String>) -> io::Result<Tape> {
        let root = super::beside_log(log).unwrap_or_else(|| PathBuf::from(TAPE_DIR));
        Tape::load(&root, run_id, secrets)
    }

    /// The next response `call` got to `method url`, handed out once.
    pub fn take(&self, call: &str, method: &str, url: &str) -> Option<Replayed> {
        let url = self.redactor.text(url);
        let mut exchanges = self.exchanges.lock().unwrap_or_else(|e| e.into_inner());
        let of_call = exchanges.get_mut(call)?;
        let at = of_call.iter().position(|e| e.method == method && e.url == url)?;
        let exchange = of_call.remove(at);
        drop(exchanges);
        let body = exchange.blob.as_deref().and_then(|name| read_blob(&self.dir, name).ok());
        Some(Replayed { exchange, body })
    }

    /// The wall-clock readings `call`'s skill made, handed out once.
    pub fn clock(&self, call: &str) -> Vec<u64> {
        self.clocks.lock().unwrap_or_else(|e| e.into_inner()).remove(call).unwrap_or_default()
    }

    /// Note that the recording had no answer for `method url` of `call`.
    pub fn missed(&self, call: &str, method: &str, url: &str) {
        let what = format!("{call}: {method} {}", self.redactor.text(url));
        self.missed.lock().unwrap_or_else(|e| e.into_inner()).push(what);
    }

    /// The requests it had no answer for, in order.
    pub fn misses(&self) -> Vec<String> {
        self.missed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The tool and result the model got for `call`: `None` when the
    /// recording has no such call; a `None` text when it was over the budget.
    pub fn result(&self, call: &str) -> Option<(&str, Option<&str>)> {
        self.results.get(call).map(|(tool, text)| (tool.as_str(), text.as_deref()))
    }

    /// True when the budget ran out while recording.
    pub fn was_full(&self) -> bool {
        self.full
    }
}

fn read_blob(dir: &Path, name: &str) -> io::Result<Vec<u8>> {
    // Names are digests written by the recorder; anything else is not read.
    if name.len() != 64 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("bad blob name {name:?}")));
    }
    let bytes = std::fs::read(dir.join("blobs").join(name))?;
    if blake3::hash(&bytes).to_hex().as_str() != name {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("blob {name} does not match its digest (changed since it was recorded)"),
        ));
    }
    Ok(bytes)
}
