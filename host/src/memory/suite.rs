//! The store tests every backend passes: the rules of the [module
//! docs](super) and [`MemoryStore`]'s methods, written against the trait.
//! A backend runs them all with [`store_suite!`], given a function that
//! opens a new, empty store; what only one backend has (SQLite's files,
//! PostgreSQL's connections) is tested beside it.

use std::any::Any;

use super::*;

/// A new, empty store, and a way to open it again (another process or
/// host on the same database).
pub(crate) struct Opened {
    /// The store.
    pub store: Box<dyn MemoryStore>,
    /// Another handle on the same database.
    pub again: Box<dyn Fn() -> Box<dyn MemoryStore> + Send + Sync>,
    /// What must live as long as the store (its temporary folder).
    pub _keep: Box<dyn Any>,
}

/// Opens a new, empty store with at most this many entries.
pub(crate) type Open = dyn Fn(u64) -> Opened;

/// One `#[test]` per suite test, each on a store from `$open` (a function
/// `fn(u64) -> Opened`).
macro_rules! store_suite {
    ($open:path) => {
        $crate::memory::suite::store_suite!(@each $open;
            entries_are_added_and_found,
            a_new_entry_on_the_same_subject_supersedes_and_the_old_one_stays_in_history,
            the_same_entry_twice_is_stored_once,
            search_text_is_never_query_syntax,
            entries_of_the_tasks_type_rank_first,
            the_subject_counts_double_rare_words_more_newer_first_among_equals,
            common_words_leave_the_ranking_to_the_rare_ones,
            use_is_counted,
            limits_refuse_with_the_limit_named,
            forgotten_entries_are_gone_and_their_ids_never_come_back,
            forgetting_an_old_version_keeps_the_newer_ones,
            each_version_is_created_after_the_one_it_supersedes_even_in_one_millisecond,
            export_then_import_gives_the_same_store,
            an_imported_newer_version_supersedes_the_stores,
            imported_ids_are_kept_when_never_given_and_never_collide,
            a_bad_import_changes_nothing,
            an_imported_users_claim_is_kept_as_the_files_claim_never_as_the_users_word,
            hosts_adding_to_one_subject_at_once_take_turns,
        );
    };
    (@each $open:path; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::memory::suite::$name(&$open)
            }
        )*
    };
}
pub(crate) use store_suite;

mod imports;
pub(crate) use imports::*;

/// Said by the user in run `r1`, step 1.
pub(crate) fn user() -> Provenance {
    Provenance::User { run_id: Some("r1".into()), step: Some(1) }
}

/// An entry the user stated.
pub(crate) fn new(kind: Kind, subject: &str, text: &str) -> NewEntry {
    NewEntry {
        kind,
        subject: subject.into(),
        text: text.into(),
        task_type: None,
        provenance: user(),
    }
}

/// A fact the user stated.
pub(crate) fn fact(subject: &str, text: &str) -> NewEntry {
    new(Kind::Fact, subject, text)
}

fn fresh(open: &Open) -> Opened {
    open(MAX_ENTRIES)
}

/// Add `entry` and return the active entry after it.
fn added(store: &dyn MemoryStore, entry: NewEntry) -> Entry {
    store.add(entry).unwrap().entry().clone()
}

fn texts(entries: &[Entry]) -> Vec<&str> {
    entries.iter().map(|e| e.text.as_str()).collect()
}

pub(crate) fn entries_are_added_and_found(open: &Open) {
    let Opened { store, again, _keep } = fresh(open);
    let added = store
        .add(fact("Staging API", "The staging API is at https://staging.example.com/v2"))
        .unwrap();
    let Added::New(entry) = added else { panic!("a new entry: {added:?}") };
    assert_eq!(
        (entry.id, entry.kind, entry.use_count, entry.provenance.clone()),
        (1, Kind::Fact, 0, user())
    );
    assert!(entry.is_active() && entry.supersedes.is_none() && entry.last_used.is_none());
    assert_eq!(entry.created.len(), 24, "{}", entry.created);
    store
        .add(new(
            Kind::Preference,
            "notes format",
            "Write notes in Markdown, wrapped at 100 columns",
        ))
        .unwrap();
    drop(store);

    let store = again();
    assert_eq!(
        texts(&store.search("where is the staging api?", None, 10).unwrap()),
        ["The staging API is at https://staging.example.com/v2"]
    );
    assert_eq!(store.search("markdown", None, 10).unwrap()[0].kind, Kind::Preference);
    assert_eq!(store.search("kubernetes", None, 10).unwrap(), Vec::new());
    assert_eq!(store.list(false).unwrap().len(), 2);
}

pub(crate) fn a_new_entry_on_the_same_subject_supersedes_and_the_old_one_stays_in_history(
    open: &Open,
) {
    let Opened { store, _keep, .. } = fresh(open);
    let old = added(&*store, fact("Staging API", "staging is at https://old.example.com"));
    let added =
        store.add(fact("  staging   api ", "staging is at https://new.example.com")).unwrap();
    let Added::Superseded { entry, previous } = added else { panic!("superseded: {added:?}") };
    assert_eq!(previous.id, old.id);
    assert_eq!(previous.superseded_by, Some(entry.id));
    assert_eq!(entry.supersedes, Some(old.id));

    assert_eq!(
        texts(&store.search("staging", None, 10).unwrap()),
        ["staging is at https://new.example.com"],
        "search sees the active entry only"
    );
    assert_eq!(store.list(false).unwrap().len(), 1);
    assert_eq!(store.list(true).unwrap().len(), 2);
    for id in [old.id, entry.id] {
        let history = store.get(id).unwrap().expect("found");
        assert_eq!(history.entry.id, id);
        assert_eq!(history.versions.iter().map(|e| e.id).collect::<Vec<_>>(), [old.id, entry.id]);
    }
    assert!(store.get(9_999).unwrap().is_none());

    // Same subject, another kind: a separate entry.
    assert!(matches!(
        store.add(new(Kind::Procedure, "staging api", "deploy with `just ship staging`")).unwrap(),
        Added::New(_)
    ));
    assert_eq!(store.list(false).unwrap().len(), 2);
}

pub(crate) fn the_same_entry_twice_is_stored_once(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    let first = added(&*store, fact("Editor", "The user edits with Helix"));
    let again = store.add(fact("EDITOR", "  The user edits with Helix\n")).unwrap();
    assert_eq!(again, Added::Existing(first));
    assert_eq!(store.list(true).unwrap().len(), 1);
}

pub(crate) fn search_text_is_never_query_syntax(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    store.add(fact("near misses", "NEAR and OR are words here; so is subject")).unwrap();
    // FTS5's syntax and PostgreSQL's tsquery syntax.
    for query in [
        "\"",
        "\"near",
        "near*",
        "subject:near",
        "NEAR(near misses)",
        "near AND",
        "OR OR",
        ")(",
        "^near",
        "-near",
        "near -",
        "{subject text}: near",
        "'",
        "",
        "   ",
        "?!",
        "near & !or",
        "near | misses",
        "near <-> misses",
        "near:*",
        "!!!",
        "'near' & 'misses'",
        "\\",
        "$1",
        "near <2> misses",
        "(near",
        "near:AB",
        "';DROP TABLE reach_memory;--",
    ] {
        let found = store.search(query, None, 10);
        assert!(found.is_ok(), "{query:?}: {found:?}");
    }
    assert_eq!(store.search("subject:near", None, 10).unwrap().len(), 1, "both words, as words");
    assert_eq!(store.search("near:*", None, 10).unwrap().len(), 1, "a word, not a prefix");
    assert_eq!(store.search("nea:*", None, 10).unwrap(), Vec::new(), "no prefix search");
    assert_eq!(store.search("", None, 10).unwrap(), Vec::new());
    assert_eq!(store.search("?!", None, 10).unwrap(), Vec::new());
    assert_eq!(store.search("near", None, 0).unwrap(), Vec::new());
    assert_eq!(store.list(true).unwrap().len(), 1, "the table is still there");
}

pub(crate) fn entries_of_the_tasks_type_rank_first(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    store.add(fact("deploy deploy", "deploy: deploy the deploy target with deploy")).unwrap();
    let mut typed = fact("release notes", "after a deploy, write release notes");
    typed.task_type = Some("Release".into());
    store.add(typed).unwrap();
    let untyped = store.search("deploy", None, 10).unwrap();
    assert_eq!(untyped[0].text, "deploy: deploy the deploy target with deploy", "rank alone");
    let typed_order = store.search("deploy", Some("release"), 10).unwrap();
    assert_eq!(typed_order[0].task_type.as_deref(), Some("release"));
    assert_eq!(typed_order.len(), 2);
    assert_eq!(store.search("deploy", Some(" RELEASE "), 1).unwrap()[0].subject, "release notes");
    assert_eq!(store.search("deploy", Some("unknown-type"), 10).unwrap()[0].text, untyped[0].text);
}

pub(crate) fn the_subject_counts_double_rare_words_more_newer_first_among_equals(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    // The word in the subject outranks the same word in a text as long.
    store.add(fact("bird", "the kestrel hovers")).unwrap();
    store.add(fact("kestrel", "the bird hovers")).unwrap();
    assert_eq!(
        store.search("kestrel", None, 2).unwrap().iter().map(|e| &e.subject).collect::<Vec<_>>(),
        ["kestrel", "bird"]
    );

    // A word few entries hold counts more than one many hold, even twice over.
    for i in 0..6 {
        store.add(fact(&format!("pipeline {i}"), "we deploy from the pipeline")).unwrap();
    }
    store.add(fact("release", "deploy and deploy again on staging")).unwrap();
    store.add(fact("animals", "a zebra on staging")).unwrap();
    let found = store.search("deploy zebra", None, 3).unwrap();
    assert_eq!(found[0].subject, "animals", "{:?}", texts(&found));
    assert_eq!(found[1].subject, "release", "then the twice-said common word");

    // Equal matches: the newer first.
    store.add(fact("ledger one", "quarterly ledger")).unwrap();
    store.add(fact("ledger two", "quarterly ledger")).unwrap();
    let found = store.search("quarterly", None, 2).unwrap();
    assert_eq!(
        found.iter().map(|e| e.subject.as_str()).collect::<Vec<_>>(),
        ["ledger two", "ledger one"]
    );
}

pub(crate) fn common_words_leave_the_ranking_to_the_rare_ones(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    for i in 0..(query::COMMON as usize + 20) {
        store.add(fact(&format!("service {i}"), &format!("the service number {i} runs"))).unwrap();
    }
    store.add(fact("kestrel", "the kestrel service deploys on fridays")).unwrap();
    // "service" is in every entry: only "kestrel" and "fridays" rank.
    let found = store.search("which service deploys kestrel on fridays", None, 5).unwrap();
    assert_eq!(found[0].subject, "kestrel");
    assert_eq!(found.len(), 1, "entries with only the common word are left out");

    // Only common words: the newest entries holding all of them, then any.
    let found = store.search("service runs", None, 3).unwrap();
    let subjects: Vec<&str> = found.iter().map(|e| e.subject.as_str()).collect();
    assert_eq!(subjects, ["service 519", "service 518", "service 517"]);
    let found = store.search("number", None, 50).unwrap();
    assert_eq!(found.len(), 50, "at most the candidates");
}

pub(crate) fn use_is_counted(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    let id = added(&*store, fact("s", "t")).id;
    store.mark_used(&[]).unwrap();
    store.mark_used(&[id, id, 999]).unwrap();
    let entry = store.get(id).unwrap().unwrap().entry;
    assert_eq!(entry.use_count, 2);
    assert!(entry.last_used.is_some_and(|t| t >= entry.created));
}

pub(crate) fn limits_refuse_with_the_limit_named(open: &Open) {
    let Opened { store, _keep, .. } = open(2);
    let err = store.add(fact("s", &"x".repeat(2001))).unwrap_err();
    assert!(err.to_string().contains("the limit is 2000"), "{err}");
    store.add(fact("a", "1")).unwrap();
    store.add(fact("a", "2")).unwrap();
    let err = store.add(fact("b", "3")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "memory: the store holds 2 entries, the most it keeps; forget some (`reach memory forget \
         ID`)"
    );
    assert!(
        matches!(store.add(fact("a", "2")).unwrap(), Added::Existing(_)),
        "a duplicate needs no room"
    );
    store.forget(2).unwrap();
    store.add(fact("b", "3")).expect("room again");
}

pub(crate) fn forgotten_entries_are_gone_and_their_ids_never_come_back(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    for i in 0..30 {
        store.add(fact(&format!("filler {i}"), &format!("filler text number {i}"))).unwrap();
    }
    let first = added(&*store, fact("Secret token place", "the token is in the desk")).id;
    let second = added(&*store, fact("secret TOKEN place", "moved: behind the shelf")).id;
    store.add(fact("filler after", "more filler")).unwrap();
    assert_eq!(store.forget(second).unwrap(), [first, second], "the entry and its history");
    assert!(store.get(first).unwrap().is_none() && store.get(second).unwrap().is_none());
    assert_eq!(store.search("token shelf desk", None, 10).unwrap(), Vec::new());
    assert!(store.export().unwrap().iter().all(|e| !e.text.contains("shelf")));
    assert_eq!(store.search("filler 12", None, 1).unwrap().len(), 1);
    assert!(matches!(store.forget(second), Err(MemoryError::NotFound { id }) if id == second));
    // Ids are never handed out again.
    assert!(added(&*store, fact("new", "entry")).id > second + 1);
}

pub(crate) fn forgetting_an_old_version_keeps_the_newer_ones(open: &Open) {
    let Opened { store, _keep, .. } = fresh(open);
    let a = added(&*store, fact("host", "build-1")).id;
    let b = added(&*store, fact("host", "build-2")).id;
    let c = added(&*store, fact("host", "build-3")).id;
    assert_eq!(store.forget(b).unwrap(), [a, b]);
    let history = store.get(c).unwrap().unwrap();
    assert_eq!(history.versions.len(), 1);
    assert_eq!(history.entry.supersedes, None, "no pointer to a forgotten entry");
    assert_eq!(texts(&store.search("host build", None, 5).unwrap()), ["build-3"]);
}

pub(crate) fn each_version_is_created_after_the_one_it_supersedes_even_in_one_millisecond(
    open: &Open,
) {
    let Opened { store, _keep, .. } = fresh(open);
    // Far more adds than milliseconds pass: without the rule, times would tie.
    let times: Vec<String> =
        (0..50).map(|i| added(&*store, fact("host", &format!("build-{i}"))).created).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "strictly increasing: {times:?}");
}

pub(crate) fn hosts_adding_to_one_subject_at_once_take_turns(open: &Open) {
    let Opened { store, again, _keep } = fresh(open);
    let again = std::sync::Arc::new(again);
    let writers: Vec<_> = (0..3)
        .map(|t| {
            let again = std::sync::Arc::clone(&again);
            std::thread::spawn(move || {
                let mine = again();
                for i in 0..20 {
                    mine.add(fact("shared subject", &format!("host {t} version {i}"))).unwrap();
                    mine.add(fact(&format!("host {t} note {i}"), "its own")).unwrap();
                }
            })
        })
        .collect();
    for i in 0..20 {
        store.add(fact("SHARED subject", &format!("main version {i}"))).unwrap();
    }
    for w in writers {
        w.join().unwrap();
    }
    let all = store.list(true).unwrap();
    assert_eq!(all.len(), 80 + 60);
    let active = store.list(false).unwrap();
    assert_eq!(active.len(), 1 + 60, "one active entry on the shared subject");
    let shared = active.iter().find(|e| e.subject.eq_ignore_ascii_case("shared subject")).unwrap();
    let history = store.get(shared.id).unwrap().unwrap();
    assert_eq!(history.versions.len(), 80);
    // One chain, oldest to newest: each version supersedes the one before.
    for pair in history.versions.windows(2) {
        assert!(pair[0].created < pair[1].created, "{pair:?}");
        assert_eq!(pair[0].superseded_by, Some(pair[1].id));
        assert_eq!(pair[1].supersedes, Some(pair[0].id));
    }
    assert_eq!(history.versions.last().map(|e| e.id), Some(shared.id));
    assert_eq!(store.search("shared", None, 10).unwrap().len(), 1);
}
