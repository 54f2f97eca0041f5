//! The Agent Reach skill SDK: everything a skill author needs.
//!
//! A skill is a WebAssembly component that the Agent Reach host runs in a
//! sandbox with exactly the folders, hosts and environment variables that the
//! operator's permission table grants it. With this crate a skill is a type
//! that implements [`Skill`], one [`export_skill!`] line, and argument types
//! that derive [`Deserialize`] and [`JsonSchema`] — the JSON Schema the model
//! sees is derived from them, and arguments arrive already decoded.
//!
//! ```no_run
//! use agent_reach_sdk::prelude::*;
//!
//! /// Arguments of `greet`.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! struct Hello;
//!
//! impl Skill for Hello {
//!     fn define() -> Definition {
//!         Definition::new("hello", env!("CARGO_PKG_VERSION"), "Greets people by name.")
//!             .tool("greet", "Say hello to someone.", |args: Greet| {
//!                 Ok(format!("Hello, {}!", args.name))
//!             })
//!     }
//! }
//!
//! export_skill!(Hello);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2` (or
//! `reach skill new NAME`, which writes a crate ready for that) and drop the
//! `.wasm` into the host's skills folder.

mod definition;
mod error;
pub mod fs;
pub mod http;

pub use definition::{Definition, Reply};
pub use error::{ErrorCode, ToolError};
pub use schemars::JsonSchema;
pub use serde::{Deserialize, Serialize};

/// The version of the WIT contract (`agent-reach:skill`) this SDK builds against.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// A skill: a named, versioned set of tools.
///
/// Implement [`Skill::define`] and export the type with [`export_skill!`].
/// The host calls `define` in a fresh instance for every call, so keep it
/// cheap and free of side effects.
pub trait Skill {
    /// Name, version, description, tools and their handlers.
    fn define() -> Definition;
}

/// What a skill module usually imports.
pub mod prelude {
    pub use crate::{
        Definition, Deserialize, ErrorCode, JsonSchema, Reply, Serialize, Skill, ToolError,
        export_skill,
    };
}

#[doc(hidden)]
pub mod __bindings {
    wit_bindgen::generate!({
        // The contract travels inside the package (`sdk/wit` links to the
        // workspace's `wit/`; `cargo package` copies the file in).
        path: "wit",
        world: "skill",
        pub_export_macro: true,
        export_macro_name: "__export_skill_bindings",
        default_bindings_module: "agent_reach_sdk::__bindings",
    });
}

#[doc(hidden)]
pub mod __private {
    use crate::__bindings::exports::agent_reach::skill::guest as wit;
    use crate::{ErrorCode, Skill};

    /// Backs the `describe` export.
    pub fn describe<S: Skill>() -> wit::Manifest {
        S::define().to_manifest()
    }

    /// Backs the `call` export.
    pub fn call<S: Skill>(tool: &str, arguments: &str) -> Result<String, wit::ToolError> {
        S::define().dispatch(tool, arguments).map_err(|e| wit::ToolError {
            code: match e.code {
                ErrorCode::InvalidArguments => wit::ErrorCode::InvalidArguments,
                ErrorCode::NotFound => wit::ErrorCode::NotFound,
                ErrorCode::Denied => wit::ErrorCode::Denied,
                ErrorCode::Failed => wit::ErrorCode::Failed,
            },
            message: e.message,
        })
    }
}

/// Say what this skill asks the operator's permission table for: folders
/// to `read` or `write`, hosts (`net`), hosts it needs a `credentials` for,
/// environment variables (`env`), as TOML with the table's own keys.
///
/// ```
/// agent_reach_sdk::requests!(
///     r#"
///     net = ["api.example.com"]
///     credentials = ["api.example.com"]
///     env = ["TZ"]
///     "#
/// );
/// ```
///
/// It grants nothing: the table alone does. `reach skills inspect` and
/// `reach policy check` show each request beside the grant that answers it
/// (or say it will be refused), `reach policy suggest NAME` prints the table
/// lines that grant it, and `reach skills list` points out an upgrade that
/// requests more. The text goes into the `agent-reach:requests` custom
/// section of the component; use the macro once per skill.
#[macro_export]
macro_rules! requests {
    ($toml:expr) => {
        const _: () = {
            const TEXT: &str = $toml;
            const LEN: usize = TEXT.len();
            const fn bytes() -> [u8; LEN] {
                let text = TEXT.as_bytes();
                let mut out = [0u8; LEN];
                let mut i = 0;
                while i < LEN {
                    out[i] = text[i];
                    i += 1;
                }
                out
            }
            // A custom section, not a WIT field: hosts that know nothing of
            // requests load the component unchanged.
            #[used]
            #[unsafe(link_section = "agent-reach:requests")]
            static REQUESTS: [u8; LEN] = bytes();
        };
    };
}

/// Export a [`Skill`] implementation as the component's `guest` interface.
///
/// Use it once per skill crate, at the top level: `export_skill!(MySkill);`.
#[macro_export]
macro_rules! export_skill {
    ($skill:ty) => {
        #[doc(hidden)]
        struct __AgentReachExport;

        impl $crate::__bindings::exports::agent_reach::skill::guest::Guest for __AgentReachExport {
            fn describe() -> $crate::__bindings::exports::agent_reach::skill::guest::Manifest {
                $crate::__private::describe::<$skill>()
            }

            fn call(
                tool: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<
                ::std::string::String,
                $crate::__bindings::exports::agent_reach::skill::guest::ToolError,
            > {
                $crate::__private::call::<$skill>(&tool, &arguments)
            }
        }

        $crate::__bindings::__export_skill_bindings!(__AgentReachExport);
    };
}
