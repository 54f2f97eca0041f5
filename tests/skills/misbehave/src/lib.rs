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

/// Files to write, then a way to fail.
#[derive(Deserialize, JsonSchema)]
struct Scribble {
    /// A folder: `a.txt` in it is overwritten, `new/` and `new/b.txt`
    /// created, `gone.txt` deleted, `old.txt` renamed to `moved.txt`.
    folder: String,
    /// Then: `fail`, `panic`, `spin`, `output` (a result past any limit), `ok`.
    then: String,
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
                "scribble",
                "Change files in a folder, then fail the way asked.",
                |a: Scribble| -> Result<String, ToolError> {
                    let dir = std::path::Path::new(&a.folder);
                    let io = |e: std::io::Error| ToolError::failed(e.to_string());
                    std::fs::write(dir.join("a.txt"), "scribbled").map_err(io)?;
                    std::fs::create_dir_all(dir.join("new")).map_err(io)?;
                    std::fs::write(dir.join("new/b.txt"), "new").map_err(io)?;
                    let _ = std::fs::remove_file(dir.join("gone.txt"));
                    let _ = std::fs::rename(dir.join("old.txt"), dir.join("moved.txt"));
                    match a.then.as_str() {
                        "fail" => Err(ToolError::failed("failed after writing")),
                        "panic" => panic!("panicked after writing"),
                        "spin" => loop {
                            std::hint::black_box(0);
                        },
                        "output" => Ok("x".repeat(4 << 20)),
                        _ => Ok("scribbled".into()),
                    }
                },
            )
            .tool(
                "fail",
                "Return a `failed` tool error with a message.",
                |a: Message| -> Result<String, ToolError> { Err(ToolError::failed(a.message)) },
            )
    }
}

export_skill!(Misbehave);
