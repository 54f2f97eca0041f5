//! `reach mcp` as clients we did not write see it: the official Python SDK
//! (tests/mcp/client.py) over stdio and streamable HTTP, at the handshake
//! revision most desktop clients speak (2025-11-25) and at 2026-07-28, and
//! the MCP Inspector's CLI. The clients come from `scripts/mcp-clients.sh
//! install`; without them these tests fail and say so.

use crate::support::mcp::{POLICY, Workspace, clients, output_within, root};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
    /// HTTP with REACH_MCP_TOKEN set, the client sending it.
    HttpWithToken,
}

const TOKEN: &str = "a-long-random-secret-for-the-test";

/// The protocol revision the client ends up speaking.
#[derive(Clone, Copy, Debug)]
enum Revision {
    /// The `initialize` handshake (`--mode legacy`).
    Handshake,
    /// The SDK's default: `server/discover`, per-request envelopes.
    Modern,
}

impl Revision {
    fn mode(self) -> &'static str {
        match self {
            Revision::Handshake => "legacy",
            Revision::Modern => "auto",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Revision::Handshake => "2025-11-25",
            Revision::Modern => "2026-07-28",
        }
    }
}

/// The skills every scenario but `a_new_skill_is_announced` starts with.
const SKILLS: &[agent_reach_tests::guests::Guest] =
    &[guests::SKILL_FILES, guests::TEST_SKILL_ECHO, guests::SKILL_WEB];

/// Runs tests/mcp/client.py `scenario` against `reach mcp` in `ws` and
/// returns what it saw, after checking it spoke `revision`.
fn client(
    ws: &Workspace,
    scenario: &str,
    transport: Transport,
    revision: Revision,
    extra: &[&str],
) -> Value {
    let clients = clients();
    let mut command = ws.command(&clients.python);
    command
        .arg(root().join("tests/mcp/client.py"))
        .arg(scenario)
        .args(["--mode", revision.mode()])
        .args(extra);
    let server = match transport {
        Transport::Stdio => {
            command.args(["--stdio", "--", env!("CARGO_BIN_EXE_reach"), "mcp"]);
            None
        }
        Transport::Http => {
            let server = ws.serve_http(&[], &[]);
            command.args(["--url", &server.url]);
            Some(server)
        }
        Transport::HttpWithToken => {
            let server = ws.serve_http(&[], &[("REACH_MCP_TOKEN", TOKEN)]);
            command.args([
                "--url",
                &server.url,
                "--header",
                &format!("Authorization: Bearer {TOKEN}"),
            ]);
            Some(server)
        }
    };
    let out = output_within(command, Duration::from_secs(120));
    let server_log = server.as_ref().map(|s| s.stderr()).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client.py {scenario} over {transport:?} failed ({}):\n\
         {stderr}\n\
         HTTP server's stderr:\n\
         {server_log}",
        out.status
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("client.py printed no JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
    });
    assert_eq!(
        seen["protocol_version"],
        revision.version(),
        "negotiated revision over {transport:?}; stderr:\n{stderr}"
    );
    seen
}

fn tool<'a>(listed: &'a Value, name: &str) -> &'a Value {
    let tools = listed["result"]["tools"]
        .as_array()
        .or_else(|| listed["tools"].as_array())
        .expect("a tools array");
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {}", names(listed).join(", ")))
}

fn names(listed: &Value) -> Vec<String> {
    let tools = listed["tools"].as_array().expect("a tools array");
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// A successful call's structured content, checked against its text content.
fn success(call: &Value) -> &Value {
    let result = &call["result"];
    assert!(result.is_object(), "the call failed at the protocol level: {call}");
    assert_ne!(result["isError"], true, "the call failed: {result}");
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"));
    let parsed: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("text content is the skill's JSON ({e}): {text}"));
    assert_eq!(parsed, result["structuredContent"], "text and structured content differ");
    &result["structuredContent"]
}

/// A refused or failed call's `{status, error_code, error, suggestion}`, checked against its text
/// content.
fn failure<'a>(call: &'a Value, code: &str) -> &'a Value {
    let result = &call["result"];
    assert_eq!(result["isError"], true, "expected a failed call (isError): {call}");
    let error = &result["structuredContent"];
    assert_eq!(error["status"], "error", "{result}");
    assert_eq!(error["error_code"], code, "{result}");
    assert!(error["error"].as_str().is_some_and(|e| !e.is_empty()), "no error message: {result}");
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"));
    assert!(text.contains(code), "the text content does not say {code}: {text}");
    error
}

fn tools_are_listed_and_called(transport: Transport, revision: Revision) {
    let ws = Workspace::new(POLICY, SKILLS);
    let seen = client(&ws, "tools", transport, revision, &[]);
    assert!(
        seen["capabilities"]["tools"].is_object(),
        "no tools capability: {}",
        seen["capabilities"]
    );
    let listed = &seen["list"];
    let all = names(listed);
    for name in ["files__read", "files__write", "files__list", "echo__echo", "web__fetch"] {
        assert!(all.contains(&name.to_owned()), "{name} is not listed: {all:?}");
    }
    assert!(!all.contains(&"files__search".to_owned()), "a tool at level deny is offered: {all:?}");

    // files writes ./notes: not read-only, destructive, no network.
    let read = tool(listed, "files__read");
    assert_eq!(read["inputSchema"]["type"], "object", "{read}");
    assert!(read["inputSchema"]["properties"]["path"].is_object(), "files__read's schema: {read}");
    assert!(read["description"].as_str().is_some_and(|d| !d.is_empty()), "{read}");
    let hints = &read["annotations"];
    assert_eq!(hints["destructiveHint"], true, "files has a write folder: {read}");
    assert_ne!(hints["readOnlyHint"], true, "{read}");
    assert_ne!(hints["openWorldHint"], true, "files has no network: {read}");
    // echo has no grants at all: read-only.
    let echo = &tool(listed, "echo__echo")["annotations"];
    assert_eq!(echo["readOnlyHint"], true, "echo has no write folder: {echo}");
    assert_ne!(echo["destructiveHint"], true, "{echo}");
    assert_ne!(echo["openWorldHint"], true, "{echo}");
    // web may reach a host and write nothing: open-world, and not read-only
    // either, since a request can change things on that host.
    let web = &tool(listed, "web__fetch")["annotations"];
    assert_eq!(web["openWorldHint"], true, "web has a network grant: {web}");
    assert_ne!(web["readOnlyHint"], true, "{web}");
    assert_ne!(web["destructiveHint"], true, "web has no write folder here: {web}");

    assert_eq!(success(&seen["read"])["content"], "alpha\nbeta\n");
    assert_eq!(success(&seen["echo"]), &json!({"greeting": "hello", "n": 3}));

    let invalid = failure(&seen["invalid_args"], "INVALID_ARGS");
    assert!(
        invalid["error"].as_str().unwrap().contains("path"),
        "names the bad argument: {invalid}"
    );
    let denied = failure(&seen["outside_grants"], "DENIED");
    assert!(denied["error"].as_str().unwrap().contains("/etc/passwd"), "names the path: {denied}");
    assert!(
        denied["suggestion"].as_str().is_some_and(|s| !s.is_empty()),
        "says what to do: {denied}"
    );

    // An unknown tool: a tool error (NO_SUCH_TOOL, as `reach call` says) or
    // a protocol error, either way naming it.
    let unknown = &seen["unknown_tool"];
    if unknown["protocol_error"].is_object() {
        assert!(
            unknown["protocol_error"]["message"].as_str().unwrap().contains("files__nope"),
            "{unknown}"
        );
    } else {
        let error = failure(unknown, "NO_SUCH_TOOL");
        assert!(error["error"].as_str().unwrap().contains("files__nope"), "{error}");
    }
}

fn a_confirm_tool_asks_the_person(transport: Transport, revision: Revision) {
    let ws = Workspace::new(POLICY, SKILLS);
    let seen = client(&ws, "elicit", transport, revision, &[]);
    let calls = &seen["calls"];

    let accepted = &calls["accept"];
    success(accepted);
    assert_eq!(
        std::fs::read_to_string(ws.path("notes/accept.md")).unwrap(),
        "accepted",
        "the confirmed write happened"
    );
    let asked = accepted["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "asked once: {accepted}");
    let question = &asked[0];
    assert_eq!(question["mode"], "form", "{question}");
    let message = question["message"].as_str().unwrap();
    assert!(
        message.contains("files") && message.contains("write"),
        "the question names the call: {message}"
    );
    assert!(message.contains("notes/accept.md"), "the question shows the arguments: {message}");
    let schema = &question["requestedSchema"];
    assert!(
        schema["properties"].as_object().is_none_or(|p| p.is_empty()),
        "nothing to fill in, only yes or no: {schema}"
    );

    for (action, said) in [("decline", "declined"), ("cancel", "cancelled")] {
        let call = &calls[action];
        assert_eq!(call["elicitations"].as_array().map(Vec::len), Some(1), "asked once: {call}");
        let error = failure(call, "DENIED");
        assert!(error["error"].as_str().unwrap().contains(said), "{action}: {error}");
        assert!(
            !ws.path(&format!("notes/{action}.md")).exists(),
            "{action}: the write happened anyway"
        );
    }
}

fn a_client_that_cannot_ask_is_refused(transport: Transport, revision: Revision) {
    let ws = Workspace::new(POLICY, SKILLS);
    let seen = client(&ws, "no-elicit", transport, revision, &[]);
    let error = failure(&seen["write"], "DENIED");
    assert!(
        error["error"].as_str().unwrap().contains("elicitation"),
        "says the client cannot ask: {error}"
    );
    assert!(!ws.path("notes/unasked.md").exists(), "the write happened without a person");
}

fn instructions_are_prompts_and_resources(transport: Transport, revision: Revision) {
    let ws = Workspace::new(POLICY, SKILLS);
    let seen = client(&ws, "prompts", transport, revision, &[]);
    let prompts = seen["prompts"]["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", seen["prompts"]));
    let prompt_names: Vec<&str> = prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(prompt_names.contains(&"files"), "{prompt_names:?}");
    assert!(!prompt_names.contains(&"echo"), "echo has no instructions: {prompt_names:?}");
    let text = seen["prompt"]["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", seen["prompt"]));
    assert!(text.len() > 40, "the instructions: {text}");

    let resources = seen["resources"]["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", seen["resources"]));
    let uris: Vec<&str> = resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.contains(&"reach://skills/files/instructions"), "{uris:?}");
    let contents = &seen["resource"]["result"]["contents"][0];
    assert_eq!(contents["text"], text, "the resource and the prompt are the same instructions");
    assert_eq!(contents["uri"], "reach://skills/files/instructions");
    assert!(
        seen["missing_prompt"]["protocol_error"].is_object(),
        "an unknown prompt is an error: {}",
        seen["missing_prompt"]
    );
}

/// A bundle served through the Skills extension, beside one the table does not name.
fn skills_workspace() -> Workspace {
    let policy = format!("{POLICY}\n[skills.code-review]\nlevel = \"auto\"\n");
    let ws = Workspace::new(&policy, SKILLS);
    let bundle = ws.path("skills/code-review");
    for folder in ["references", "scripts", "assets"] {
        std::fs::create_dir_all(bundle.join(folder)).unwrap();
    }
    std::fs::write(
        bundle.join("SKILL.md"),
        "---\nname: code-review\ndescription: Review a change against the team's checklist.\n\
         license: Apache-2.0\nmetadata:\n  version: \"1.0\"\n---\nRead references/checklist.md, then \
         run scripts/count.py.\n",
    )
    .unwrap();
    std::fs::write(bundle.join("references/checklist.md"), "# Checklist\n- tests\n").unwrap();
    std::fs::write(
        bundle.join("scripts/count.py"),
        "import sys\nprint(len(sys.argv) - 1, 'args')\n",
    )
    .unwrap();
    std::fs::write(bundle.join("assets/logo.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    std::fs::create_dir_all(ws.path("skills/runners")).unwrap();
    std::fs::copy(guests::RUNNER_PYTHON.path(), ws.path("skills/runners/python.wasm")).unwrap();
    let unserved = ws.path("skills/unserved");
    std::fs::create_dir_all(&unserved).unwrap();
    std::fs::write(
        unserved.join("SKILL.md"),
        "---\nname: unserved\ndescription: Not in the table.\n---\nx\n",
    )
    .unwrap();
    ws
}

fn bundles_are_served_as_skills(transport: Transport, revision: Revision) {
    let ws = skills_workspace();
    let seen = client(&ws, "skills", transport, revision, &[]);
    assert_eq!(
        seen["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({}),
        "{}",
        seen["capabilities"]
    );
    let listed = &seen["list"]["result"];
    let skills = listed["skills"].as_array().unwrap_or_else(|| panic!("{}", seen["list"]));
    assert_eq!(skills.len(), 1, "only the bundle the table names: {skills:?}");
    let entry = &skills[0];
    assert_eq!(entry["uri"], "skill://code-review/SKILL.md");
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "code-review", "description": "Review a change against the team's checklist.",
               "license": "Apache-2.0", "metadata": {"version": "1.0"}})
    );
    if let Revision::Modern = revision {
        // Result types and cache hints exist from 2026-07-28 on; the SDK leaves them out before.
        assert_eq!(listed["resultType"], "complete", "{listed}");
        assert!(listed["ttlMs"].is_u64() && listed["cacheScope"] == "private", "{listed}");
    }
    let uris: Vec<&str> =
        entry["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://code-review/SKILL.md",
            "skill://code-review/assets/logo.bin",
            "skill://code-review/references/checklist.md",
            "skill://code-review/scripts/count.py",
        ]
    );
    assert_eq!(seen["get"]["result"]["skill"], *entry, "skills/get answers the listed entry");
    // Every file read back matches its digest and size, the binary one too.
    let verified = seen["verified"].as_object().unwrap();
    assert_eq!(verified.len(), 4, "{verified:?}");
    assert!(verified.values().all(|ok| ok == true), "{verified:?}");
    assert_eq!(seen["get_unknown"]["protocol_error"]["code"], -32602, "{}", seen["get_unknown"]);
    let resources: Vec<&str> = seen["resources"]["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(resources.contains(&"skill://code-review/SKILL.md"), "{resources:?}");
    assert!(!resources.iter().any(|u| u.contains("unserved")), "{resources:?}");
    for refused in ["read_unserved", "read_unlisted"] {
        assert!(seen[refused]["protocol_error"].is_object(), "{refused}: {}", seen[refused]);
    }
    // Its script is a tool beside the others, and runs in the sandbox.
    let tools: Vec<&str> =
        seen["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(
        tools.contains(&"code-review__run_script") && tools.contains(&"files__read"),
        "{tools:?}"
    );
    let ran = &seen["script"]["result"];
    assert_ne!(ran["isError"], true, "{ran}");
    assert_eq!(ran["content"][0]["text"], "2 args\n", "{ran}");
}

fn a_new_skill_is_announced(transport: Transport, revision: Revision) {
    let ws = Workspace::new(POLICY, &[guests::SKILL_FILES]);
    let source = guests::TEST_SKILL_ECHO.path();
    let dest = ws.path("skills/echo.wasm");
    let seen = client(
        &ws,
        "list-changed",
        transport,
        revision,
        &["--copy", source.to_str().unwrap(), dest.to_str().unwrap()],
    );
    let before: Vec<&str> =
        seen["before"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(!before.contains(&"echo__echo"), "{before:?}");
    assert_eq!(
        seen["notified"], true,
        "no tools/list_changed within 20 s of the copy; the client saw: {}",
        seen["seen"]
    );
    let after: Vec<&str> =
        seen["after"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(after.contains(&"echo__echo") && after.contains(&"files__read"), "{after:?}");
}

/// One test per transport and revision for each scenario, named
/// `scenario::transport_revision`; attributes before a scenario go on each.
macro_rules! with_every_client {
    ($($(#[$attr:meta])* $scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use super::{Revision, Transport};
            #[test]
            $(#[$attr])*
            fn stdio_2025_11_25() {
                super::$scenario(Transport::Stdio, Revision::Handshake);
            }
            #[test]
            $(#[$attr])*
            fn stdio_2026_07_28() {
                super::$scenario(Transport::Stdio, Revision::Modern);
            }
            #[test]
            $(#[$attr])*
            fn http_2025_11_25() {
                super::$scenario(Transport::Http, Revision::Handshake);
            }
            #[test]
            $(#[$attr])*
            fn http_2026_07_28() {
                super::$scenario(Transport::Http, Revision::Modern);
            }
        }
    )*};
}

with_every_client!(
    tools_are_listed_and_called,
    a_confirm_tool_asks_the_person,
    a_client_that_cannot_ask_is_refused,
    instructions_are_prompts_and_resources,
    bundles_are_served_as_skills,
    a_new_skill_is_announced,
);

/// With a token, every request of the SDK's session carries it, the
/// confirmation's round trip too.
#[test]
fn a_client_with_the_token_is_served() {
    a_confirm_tool_asks_the_person(Transport::HttpWithToken, Revision::Handshake);
    a_confirm_tool_asks_the_person(Transport::HttpWithToken, Revision::Modern);
}

/// The MCP Inspector's CLI mode (TypeScript SDK, 2025-11-25) over stdio:
/// lists the tools and reads a file.
#[test]
fn the_inspector_cli_lists_tools_and_reads_a_file() {
    let clients = clients();
    let ws = Workspace::new(POLICY, SKILLS);
    let inspector = |args: &[&str]| -> Value {
        let mut command = ws.command("node");
        command
            .arg(&clients.inspector)
            .args(["--cli", env!("CARGO_BIN_EXE_reach"), "mcp"])
            .args(args);
        let out = output_within(command, Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "inspector {args:?} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("the inspector printed no JSON ({e}): {stdout}"))
    };
    let listed = inspector(&["--method", "tools/list"]);
    let all = names(&listed);
    assert!(
        all.contains(&"files__read".to_owned()) && all.contains(&"echo__echo".to_owned()),
        "{all:?}"
    );
    assert_eq!(tool(&listed, "files__read")["annotations"]["destructiveHint"], true);

    let read = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "files__read",
        "--tool-arg",
        "path=docs/a.txt",
    ]);
    assert_ne!(read["isError"], true, "{read}");
    assert_eq!(read["structuredContent"]["content"], "alpha\nbeta\n", "{read}");
}
