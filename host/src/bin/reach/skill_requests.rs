//! `reach skill requests WASM [--set FILE]`: the requests a built component
//! carries, and the way to add them to one whose language has no `requests!`
//! macro (componentize-py, componentize-js and TinyGo build the component;
//! this adds the section afterwards).

use agent_reach::policy::{Capability, Requests};
use agent_reach::runtime::requests_section;
use agent_reach::text::escape_for_terminal;
use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

/// Show the requests of `wasm`, after adding those in `set` when given.
pub fn run(wasm: &Path, set: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let requests = match set {
        Some(file) => {
            let requests = read_file(file)?;
            let out = requests_section::with_requests(&bytes, &requests)
                .map_err(|why| anyhow::anyhow!("{}: {why}", wasm.display()))?;
            write_replacing(wasm, &out)?;
            eprintln!("added the requests of {} to {}", file.display(), wasm.display());
            Some(requests)
        }
        None => match requests_section::read(&bytes) {
            Ok(None) => None,
            Ok(Some(text)) => Some(
                Requests::from_toml(&text)
                    .map_err(|why| anyhow::anyhow!("{}: {why}", wasm.display()))?,
            ),
            Err(why) => anyhow::bail!("{}: {why}", wasm.display()),
        },
    };
    if json {
        println!("{}", serde_json::json!({ "wasm": wasm, "requests": requests }));
    } else {
        print_requests(requests.as_ref());
    }
    Ok(ExitCode::SUCCESS)
}

/// The requests in a TOML file, checked as the host checks a section.
fn read_file(file: &Path) -> anyhow::Result<Requests> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the requests file {}", file.display()))?;
    Requests::from_toml(&text).map_err(|why| {
        anyhow::anyhow!(
            "{}: {why}\n  e.g. read = [\"./data\"]\n       net = [\"api.example.com\"]",
            file.display()
        )
    })
}

/// Replace `path` with `bytes` through a temporary file beside it, so a
/// failed write leaves the component as it was.
fn write_replacing(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write beside {}", path.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

fn print_requests(requests: Option<&Requests>) {
    let Some(requests) = requests.filter(|r| !r.is_empty()) else {
        println!("requests: none");
        return;
    };
    println!("requests:");
    for capability in Capability::ALL {
        let items = requests.list(capability);
        if !items.is_empty() {
            println!("  {:<12} {}", capability.key(), escape_for_terminal(&items.join(", ")));
        }
    }
}
