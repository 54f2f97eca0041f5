//! The suite's export and import tests: what a file brings into a store,
//! and what it may not.

use super::*;

pub(crate) fn export_then_import_gives_the_same_store(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    store.add(fact("host", "build-1")).unwrap();
    store.add(fact("host", "build-2")).unwrap();
    let mut typed = new(Kind::Procedure, "deploy", "run `just ship`, then check /health");
    typed.task_type = Some("release".into());
    typed.provenance =
        Provenance::Tool { run_id: "r9".into(), step: 4, tool: Some("http_api__get".into()) };
    let id = added(&*store, typed).id;
    store.mark_used(&[id]).unwrap();
    store.add(fact("gone", "forgotten")).unwrap();
    store.forget(4).unwrap();
    store.add(new(Kind::Preference, "tone", "short answers")).unwrap();
    let exported = store.export().unwrap();
    assert_eq!(exported.len(), 4);

    let Opened { store: other, _keep: _keep2, .. } = fresh(open);
    let text = to_export(&exported);
    let report = other.import(&parse_export(&text).unwrap(), "copy.jsonl").unwrap();
    assert_eq!(report, Imported { added: 4, existing: 0 });
    // What the file said about each entry is kept as the file's claim.
    let as_imported: Vec<Entry> = exported
        .iter()
        .map(|e| Entry { provenance: e.provenance.imported_from("copy.jsonl"), ..e.clone() })
        .collect();
    assert_eq!(
        other.export().unwrap(),
        as_imported,
        "ids, links, times, use counts and claims kept"
    );
    assert_eq!(other.search("deploy", Some("release"), 5).unwrap()[0].id, id);
    assert_eq!(texts(&other.search("host", None, 5).unwrap()), ["build-2"]);
    assert!(added(&*other, fact("next", "one")).id > 5, "ids go on after the imported ones");

    // Again: nothing new.
    assert_eq!(other.import(&exported, "copy.jsonl").unwrap(), Imported { added: 0, existing: 4 });

    // Into the first store after forgetting the old version: it comes back
    // as history, and the newer entry stays active.
    store.forget(1).unwrap();
    assert_eq!(store.import(&exported, "copy.jsonl").unwrap(), Imported { added: 1, existing: 3 });
    let history = store.get(2).unwrap().unwrap();
    assert_eq!(texts(&history.versions), ["build-1", "build-2"]);
    assert_eq!(texts(&store.search("host", None, 5).unwrap()), ["build-2"]);
    assert!(store.get(1).unwrap().is_none(), "a forgotten id is not given out again");
}

pub(crate) fn an_imported_newer_version_supersedes_the_stores(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    store.add(fact("host", "build-1")).unwrap();
    let mut newer = store.export().unwrap().remove(0);
    newer.id = 50;
    newer.text = "build-9".into();
    newer.created = "2999-01-01T00:00:00.000Z".into();
    let mut older = newer.clone();
    older.id = 51;
    older.text = "build-0".into();
    older.created = "2000-01-01T00:00:00.000Z".into();
    store.import(&[newer, older], "f.jsonl").unwrap();
    let history = store.get(1).unwrap().unwrap();
    assert_eq!(texts(&history.versions), ["build-0", "build-1", "build-9"]);
    assert_eq!(texts(&store.search("host", None, 5).unwrap()), ["build-9"]);
    assert_eq!(store.list(false).unwrap().len(), 1);
}

pub(crate) fn imported_ids_are_kept_when_never_given_and_never_collide(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    let template = {
        let Opened { store: source, _keep, .. } = fresh(open);
        source.add(fact("template", "t")).unwrap();
        source.export().unwrap().remove(0)
    };
    let entries: Vec<Entry> = [5, 1, 2, 3, 4, 6]
        .into_iter()
        .map(|id| Entry {
            id,
            subject: format!("subject {id}"),
            text: format!("text {id}"),
            ..template.clone()
        })
        .collect();
    assert_eq!(store.import(&entries, "f.jsonl").unwrap().added, 6);
    // 5 was never given: kept. 1 to 4 and 6 were (the sequence passed 5): new ones.
    let ids: Vec<EntryId> = store.export().unwrap().iter().map(|e| e.id).collect();
    assert_eq!(ids, [5, 6, 7, 8, 9, 10]);
    assert_eq!(added(&*store, fact("next", "one")).id, 11);
}

pub(crate) fn a_bad_import_changes_nothing(open: &Open) {
    for max in [MAX_ENTRIES, 3] {
        let Opened { store, _keep, .. } = open(max);
        store.add(fact("keep", "me")).unwrap();
        let before = store.export().unwrap();
        let mut entries = before.clone();
        for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
            let mut e = before[0].clone();
            e.id = 10 + i as i64;
            e.subject = format!("s{i}");
            e.text = text.into();
            entries.push(e);
        }
        if max == MAX_ENTRIES {
            entries[2].text = "x".repeat(2001);
            let err = store.import(&entries, "f.jsonl").unwrap_err();
            assert_eq!(
                err.to_string(),
                "line 3: the text is 2001 characters; the limit is 2000 — shorten it or split it \
                 into several entries"
            );
        } else {
            assert!(matches!(store.import(&entries, "f.jsonl"), Err(MemoryError::Full { .. })));
        }
        assert_eq!(store.export().unwrap(), before, "all or nothing");
    }
}

pub(crate) fn an_imported_users_claim_is_kept_as_the_files_claim_never_as_the_users_word(
    open: &Open,
) {
    let Opened { store, _keep, .. } = fresh(open);
    store.add(fact("host", "build-1")).unwrap();
    let exported = store.export().unwrap();
    assert_eq!(exported[0].provenance, user());
    let Opened { store: other, _keep: _keep2, .. } = fresh(open);
    other.import(&exported, "backup.jsonl").unwrap();
    let imported = other.export().unwrap().remove(0);
    assert_eq!(
        imported.provenance,
        Provenance::Imported { file: "backup.jsonl".into(), claimed: Box::new(user()) }
    );
    let block = render(std::slice::from_ref(&imported));
    assert!(block.ends_with("- [fact] host: build-1 (imported from \"backup.jsonl\")"), "{block}");
    assert!(!block.contains("stated by the user"), "{block}");
    assert_eq!(
        imported.provenance.claim().as_deref(),
        Some("stated by the user in run r1, step 1")
    );

    // Imported again from another file: imported from that one, with the
    // first claim (imports do not nest).
    let Opened { store: third, _keep: _keep3, .. } = fresh(open);
    third.import(&[imported], "again.jsonl").unwrap();
    assert_eq!(
        third.export().unwrap()[0].provenance,
        Provenance::Imported { file: "again.jsonl".into(), claimed: Box::new(user()) }
    );
}
