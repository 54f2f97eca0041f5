//! The official MCP conformance suite's server scenarios against `reach mcp
//! --http` (scripts/mcp-conformance.sh, also `just mcp-conformance`). The
//! scenarios that test the suite's own fixture tools, prompts and resources
//! are listed, each with its reason, in tests/mcp/conformance-expected-failures.yml;
//! any other failure fails this test, and so does a listed scenario that passes.

use agent_reach_tests::guests;
use std::process::Command;
use std::time::Duration;

#[test]
fn the_conformance_suite_passes_but_for_the_listed_scenarios() {
    crate::support::mcp::clients();
    guests::SKILL_FILES.path();
    let mut command = Command::new("bash");
    command
        .arg(crate::support::mcp::root().join("scripts/mcp-conformance.sh"))
        .arg(env!("CARGO_BIN_EXE_reach"));
    let out = crate::support::mcp::output_within(command, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the conformance suite failed ({}); target/mcp-conformance has each scenario's \
         checks.json\n\
         {stdout}\n\
         {stderr}",
        out.status
    );
}
