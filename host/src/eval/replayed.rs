//! `reach eval --record` / `--replay`: what a recorded run was run in,
//! and a recorded run played back in another working folder and port.

use super::case::Placeholders;
use std::path::Path;
use std::sync::Arc;

/// What a recorded evaluation run was run in: what a replay rewrites.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Recorded {
    pub workdir: String,
    pub port: u16,
}

/// The recorded run `run_id` in `dir`, its replies rewritten from the
/// recorded working folder and port to `values`.
pub(super) fn played_back(
    dir: &Path,
    run_id: &str,
    values: &Placeholders,
) -> Result<Arc<crate::harness::playback::Playback>, String> {
    let file = dir.join(format!("{run_id}.case.json"));
    let recorded: Recorded = std::fs::read(&file)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        .map_err(|e| {
            format!(
                "--replay {}: no recorded run {run_id} ({}: {e}); record one with `reach eval \
                 --record DIR`",
                dir.display(),
                file.display()
            )
        })?;
    let records = crate::harness::audit::read_log(dir, run_id)
        .map_err(|e| format!("--replay {}: {e}", dir.display()))?;
    let tape = crate::tape::Tape::load(&dir.join(crate::tape::TAPE_DIR), run_id, Vec::new())
        .map_err(|e| format!("--replay {}: {e}", dir.display()))?;
    let playback = crate::harness::playback::Playback::from_records(&records, Arc::new(tape), true)
        .map_err(|why| format!("--replay {}: {run_id}: {why}", dir.display()))?;
    let rewrites = [
        (recorded.workdir, values.workdir.clone()),
        (format!("127.0.0.1:{}", recorded.port), format!("127.0.0.1:{}", values.port)),
        (format!("localhost:{}", recorded.port), format!("localhost:{}", values.port)),
    ];
    Ok(Arc::new(playback.rewritten(&rewrites)))
}
