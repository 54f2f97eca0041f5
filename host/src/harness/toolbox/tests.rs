//! Offered names, the built-ins, the on-demand menu and suggestions.

use super::*;
use serde_json::json;

#[test]
fn names_fit_every_provider() {
    assert_eq!(offered_name("files", "read"), "files__read");
    assert_eq!(offered_name("http_api", "request"), "http_api__request");
    assert_eq!(offered_name("my-skill", "do.it"), "my-skill__do_it");
    assert_eq!(offered_name(&"a".repeat(40), &"b".repeat(40)).len(), 64);
}

#[test]
fn every_built_in_tool_name_is_under_a_reserved_skill_name() {
    use crate::policy::{BUILTIN_TOOL_NAMES, RESERVED_SKILL_NAMES};
    let built_ins = [
        WORKBENCH_READ,
        SKILL_INSTRUCTIONS,
        SKILL_OPEN,
        builtins::REMEMBER,
        builtins::RECALL,
        crate::agents::DELEGATE,
    ];
    assert_eq!(BUILTIN_TOOL_NAMES.split(", ").count(), built_ins.len());
    for name in built_ins {
        let (skill, tool) = name.split_once("__").expect("SKILL__TOOL");
        // The only skill whose tool could be offered under this name.
        assert!(RESERVED_SKILL_NAMES.contains(&skill), "{name}");
        assert_eq!(offered_name(skill, tool), name);
        assert!(
            BUILTIN_TOOL_NAMES.split(", ").any(|n| n == name),
            "{name} is named in the refusal"
        );
    }
}

#[test]
fn on_demand_offers_built_ins_the_menu_and_only_opened_skills() {
    let mut tb = Toolbox::default();
    tb.add("workbench__read", "", json!({}), Target::WorkbenchRead);
    for (skill, tool) in [("files", "read"), ("files", "write"), ("web", "fetch")] {
        tb.add(
            &offered_name(skill, tool),
            "",
            json!({}),
            Target::Skill { skill: skill.into(), tool: tool.into() },
        );
    }
    tb.menu = vec![
        MenuEntry {
            skill: "files".into(),
            description: "Files in granted folders.".into(),
            tools: vec!["read".into(), "write".into()],
            words: String::new(),
        },
        MenuEntry {
            skill: "web".into(),
            description: "Web pages.".into(),
            tools: vec!["fetch".into()],
            words: String::new(),
        },
    ];
    let names = |specs: Vec<ToolSpec>| {
        specs.into_iter().map(|s| (s.name, s.description)).collect::<Vec<_>>()
    };
    tb.enable_open();
    let first = names(tb.on_demand(&[]));
    assert_eq!(
        first.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["workbench__read", "skills__open"]
    );
    assert!(
        first[1].1.contains(
            "files — Files in granted folders. (tools: read, write); web — Web pages. (tools: \
             fetch)"
        ),
        "{}",
        first[1].1
    );
    let opened = names(tb.on_demand(&["web".to_owned(), "files".to_owned()]));
    // In the order opened, after the menu, which stays the same: each list starts with the last.
    assert_eq!(
        opened.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["workbench__read", "skills__open", "web__fetch", "files__read", "files__write"]
    );
    assert_eq!(opened[1], first[1]);
    assert_eq!(first_sentence("Reads files. Never writes."), "Reads files.");
}

#[test]
fn close_names_rank_by_edit_distance() {
    let mut tb = Toolbox::default();
    for n in ["files__read", "files__write", "files__search", "web__fetch"] {
        tb.add(n, "", json!({}), Target::WorkbenchRead);
    }
    assert_eq!(tb.close_names("files_read")[0], "files__read");
    assert_eq!(tb.close_names("read_file")[..1], ["files__read"]);
    assert_eq!(tb.close_names("web_fetch")[0], "web__fetch");
}
