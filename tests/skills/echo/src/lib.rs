//! Test skill `echo`: returns its arguments.
//!
//! Its name and version come from [`STAMP`], a fixed-length marker that tests
//! and benchmarks rewrite in copies of the `.wasm` (same length, so the
//! component stays valid) to get many distinct skills, or two versions of
//! one, from a single build.

use agent_reach_sdk::prelude::*;

/// `@@name=<16 chars>@@version=<8 chars>@@`, padded with `_`/spaces.
static STAMP: &str = "@@name=echo____________@@version=1.0.0   @@";

fn field<'a>(stamp: &'a str, key: &str) -> &'a str {
    let start = stamp.find(key).map_or(0, |i| i + key.len());
    let rest = &stamp[start..];
    let end = rest.find("@@").unwrap_or(rest.len());
    rest[..end].trim_end_matches(['_', ' '])
}

/// Arguments of `echo`: any JSON object.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// Anything; returned unchanged.
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

struct Echo;

impl Skill for Echo {
    fn define() -> Definition {
        // black_box keeps the stamp one string in the data segment instead of
        // letting the optimiser split it into constants.
        let stamp = std::hint::black_box(STAMP);
        Definition::new(field(stamp, "@@name="), field(stamp, "@@version="), "Returns its arguments unchanged. Test skill.")
            .tool("echo", "Return the arguments object unchanged.", |args: EchoArgs| {
                Ok(serde_json::Value::Object(args.rest))
            })
    }
}

export_skill!(Echo);
