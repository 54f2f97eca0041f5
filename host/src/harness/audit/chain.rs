//! The hash chain through a log's records, and the signed heads that end it.
//!
//! Every line carries `seq` (1, 2, … through every part of the log) and
//! `prev`: the sha256 of the exact bytes of the line before it (newline
//! included), or for the first line, of the run's genesis text — so a
//! first line cannot be dropped, nor a log passed off as another run's.
//! The last line of a finished log is `log_sealed`, and the last of each
//! part of a rotating log `log_rotated`: those carry `key` and `signature`,
//! an Ed25519 signature over [`head_message`] — the run, their own `seq`
//! and `prev` — so the signature covers every line before them.
//!
//! The chain is one per log file, shared by the run and its workers (which
//! write the same file): a line is linked and written under its lock, so
//! the order in the file is the order of the chain.

use super::key::AuditKey;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// Where a log's chain is: the last line's number and hash.
pub(super) struct Chain {
    pub(super) seq: u64,
    pub(super) prev: String,
    /// Signs the heads; `None` for a log that is not a file (nothing on
    /// disk to verify later).
    pub(super) key: Option<AuditKey>,
    /// Whether the last line written is a signed head.
    pub(super) sealed: bool,
}

/// A chain shared by the log and its children.
pub(super) type SharedChain = Arc<Mutex<Chain>>;

impl Chain {
    /// The chain of a new log of `run_id`.
    pub(super) fn start(run_id: &str, key: Option<AuditKey>) -> SharedChain {
        Arc::new(Mutex::new(Chain { seq: 0, prev: genesis(run_id), key, sealed: false }))
    }

    /// Give `line` its place: the next `seq` and the last line's hash.
    pub(super) fn link(&self, line: &mut Map<String, Value>) {
        line.insert("seq".into(), Value::from(self.seq + 1));
        line.insert("prev".into(), Value::String(self.prev.clone()));
    }

    /// Add `key` and `signature` to a head `line` of `run_id`, linked by
    /// [`Chain::link`]. `false` without a key (nothing is signed).
    pub(super) fn sign(&self, run_id: &str, line: &mut Map<String, Value>) -> bool {
        let Some(key) = &self.key else { return false };
        let signature = key.sign(&head_message(run_id, self.seq + 1, &self.prev));
        line.insert("key".into(), Value::String(key.public_hex()));
        line.insert("signature".into(), Value::String(signature));
        true
    }

    /// `text` (one whole line) was written: it is the last line now.
    pub(super) fn advance(&mut self, text: &str, head: bool) {
        self.seq += 1;
        self.prev = sha256_hex(text.as_bytes());
        self.sealed = head;
    }
}

/// The hash the first line of run `run_id`'s log links to.
pub fn genesis(run_id: &str) -> String {
    sha256_hex(format!("agent-reach audit chain v1\n{run_id}\n").as_bytes())
}

/// What a head of run `run_id` signs: the run, the head's `seq` and its
/// `prev` (the hash of the line before it, which links every line before).
pub fn head_message(run_id: &str, seq: u64, prev: &str) -> Vec<u8> {
    format!("agent-reach audit head v1\n{run_id}\n{seq}\n{prev}\n").into_bytes()
}

/// The sha256 of `bytes`, lowercase hex.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    super::key::hex(&sha2::Sha256::digest(bytes))
}
