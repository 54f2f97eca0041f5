//! The generated bindings for the `agent-reach:skill` world, kept private so
//! the rest of the host sees curated types (see `registry::Manifest`).

wasmtime::component::bindgen!({
    path: "../wit",
    world: "skill",
    exports: { default: async },
});

pub(crate) use exports::agent_reach::skill::guest::{ErrorCode, Manifest, ToolError};
#[cfg(test)]
pub(crate) use exports::agent_reach::skill::guest::{Example, Tool};
