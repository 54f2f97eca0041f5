//! Test skill `echo`: returns its arguments.
//!
//! Its name and version come from [`STAMP`], a fixed-length marker that tests
//! and benchmarks rewrite in copies of the `.wasm` (same length, so the
//! component stays valid) to get many distinct skills, or two versions of
//! one, from a single build.

use agent_reach_sdk::prelude::*;

/// `@@name=<16 chars>@@version=<8 chars>@@`, padded with `_`/spaces.
static STAMP: &str = "@@name=echo____________@@version=1.0.0   @@";

/// The padded field at `range` of the stamp. Fixed offsets rather than a
/// substring search, which cost a measurable share of a benchmarked call.
fn field(stamp: &str, range: std::ops::Range<usize>) -> &str {
    stamp.get(range).unwrap_or("").trim_end_matches(['_', ' '])
}

/// Arguments of `echo`: any JSON object, returned byte for byte. Decoding
/// into a `RawValue` checks the JSON without building a map, so the call
/// measures the sandbox (what the benchmark is for), like `cat` on the
/// native side, rather than map building inside the guest.
#[derive(Deserialize, JsonSchema)]
#[serde(transparent)]
struct EchoArgs(
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    Box<serde_json::value::RawValue>,
);

/// Arguments of `wait`.
#[derive(Deserialize, JsonSchema)]
struct WaitArgs {
    /// How long to wait, in milliseconds.
    ms: u64,
}

struct Echo;

impl Skill for Echo {
    fn define() -> Definition {
        // black_box keeps the stamp one string in the data segment instead of
        // letting the optimiser split it into constants.
        let stamp = std::hint::black_box(STAMP);
        let (name, version) = (field(stamp, 7..23), field(stamp, 33..41));
        Definition::new(name, version, "Returns its arguments unchanged. Test skill.")
            .tool("echo", "Return the arguments object unchanged.", |args: EchoArgs| {
                Ok(String::from(args.0.get()))
            })
            // A call that is still running when its file is replaced (the
            // hot-reload tests) says which build answered.
            .tool(
                "wait",
                "Wait `ms` milliseconds, then say which skill and version answered.",
                move |args: WaitArgs| {
                    std::thread::sleep(std::time::Duration::from_millis(args.ms));
                    Ok(format!("{name} {version}"))
                },
            )
    }
}

export_skill!(Echo);
