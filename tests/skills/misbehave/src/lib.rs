//! Test skill `misbehave`: every way a tool can go wrong, on request.

use agent_reach_sdk::prelude::*;

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// A size.
#[derive(Deserialize, JsonSchema)]
struct Size {
    /// How many bytes (or megabytes, for `alloc`).
    n: u64,
}

/// A message.
#[derive(Deserialize, JsonSchema)]
struct Message {
    /// Text to use.
    message: String,
}

struct Misbehave;

impl Skill for Misbehave {
    fn define() -> Definition {
        Definition::new("misbehave", "0.1.0", "Misbehaves on purpose. Test skill.")
            .tool("spin", "Loop forever, burning CPU.", |_: Nothing| -> Result<String, ToolError> {
                let mut x: u64 = 0;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
            .tool("sleep", "Block in the host (a clock wait) for n milliseconds.", |a: Size| {
                std::thread::sleep(std::time::Duration::from_millis(a.n));
                Ok("woke up")
            })
            .tool("alloc", "Allocate n MiB, touching every page, and keep it.", |a: Size| {
                let mut keep: Vec<Vec<u8>> = Vec::new();
                for _ in 0..a.n {
                    keep.push(vec![1u8; 1 << 20]);
                }
                Ok(format!("allocated {} MiB", keep.len()))
            })
            .tool("output", "Return a result of n bytes.", |a: Size| {
                Ok("x".repeat(usize::try_from(a.n).unwrap_or(usize::MAX)))
            })
            .tool("stdout", "Print n bytes to stdout and stderr, then return ok.", |a: Size| {
                let line = "y".repeat(1023) + "\n";
                for _ in 0..a.n / 1024 {
                    print!("{line}");
                    eprint!("{line}");
                }
                Ok("printed")
            })
            .tool("panic", "Panic with a message.", |a: Message| -> Result<String, ToolError> {
                panic!("{}", a.message)
            })
            .tool(
                "fail",
                "Return a `failed` tool error with a message.",
                |a: Message| -> Result<String, ToolError> { Err(ToolError::failed(a.message)) },
            )
    }
}

export_skill!(Misbehave);
