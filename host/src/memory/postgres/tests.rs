//! The store on a real PostgreSQL server (a throwaway cluster on
//! 127.0.0.1, one database a test): the shared store suite, and what only
//! a server has — passwords, connections that fail or drop, the schema
//! version, several hosts at once.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::cluster::{Cluster, PASSWORD};
use super::connection::display_url;
use super::*;
use crate::memory::suite::{Opened, fact, store_suite};

/// A new store in a database of its own, for the shared suite.
fn open_postgres(max_entries: u64) -> Opened {
    let url = Cluster::shared().database();
    let store = PostgresStore::connect(&url, Some(PASSWORD)).unwrap().with_max_entries(max_entries);
    Opened {
        store: Box::new(store),
        again: Box::new(move || {
            Box::new(
                PostgresStore::connect(&url, Some(PASSWORD)).unwrap().with_max_entries(max_entries),
            )
        }),
        _keep: Box::new(()),
    }
}

mod suite {
    super::store_suite!(super::open_postgres);
}

/// The database name at the end of a URL.
fn db_name(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

#[test]
fn a_password_in_the_url_is_refused_and_never_repeated() {
    let url = Cluster::shared().database().replace("reach@", "reach:hunter2@");
    let err = PostgresStore::connect(&url, None).unwrap_err().to_string();
    assert!(err.contains("REACH_MEMORY_PASSWORD"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert_eq!(
        display_url("postgres://u:hunter2@h:5/d?password=hunter2&sslmode=require"),
        "postgres://u@h:5/d?sslmode=require"
    );
}

#[test]
fn a_wrong_password_is_an_error_naming_the_database_not_the_password() {
    let url = Cluster::shared().database();
    let err = PostgresStore::connect(&url, Some("wrong-horse-battery")).unwrap_err().to_string();
    assert!(err.starts_with(&format!("memory database {url}: ")), "{err}");
    assert!(err.contains("password authentication failed for user \"reach\""), "{err}");
    assert!(!err.contains("wrong-horse-battery"), "{err}");
    let err = PostgresStore::connect(&url, None).unwrap_err().to_string();
    assert!(err.contains("password"), "no password given: {err}");
}

#[test]
fn a_server_that_is_down_or_silent_is_an_error_in_bounded_time() {
    // Nothing listens: refused at once.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = PostgresStore::connect(&format!("postgres://reach@127.0.0.1:{closed}/x"), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Connection refused") || err.contains("connect"), "{err}");

    // Something accepts and never answers: the connect timeout ends the wait.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let start = Instant::now();
    let err = PostgresStore::connect(
        &format!("postgres://reach@127.0.0.1:{port}/x?connect_timeout=1"),
        Some(PASSWORD),
    )
    .unwrap_err()
    .to_string();
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    assert!(err.contains("timed out") || err.contains("timeout"), "{err}");
    drop(silent);
}

#[test]
fn a_dropped_connection_is_made_again_at_the_next_call() {
    let cluster = Cluster::shared();
    let url = cluster.database();
    let store = PostgresStore::connect(&url, Some(PASSWORD)).unwrap();
    store.add(fact("before", "the drop")).unwrap();
    // The server ends every session of this database, as a restart or a failover would.
    cluster.psql(
        "postgres",
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
            db_name(&url)
        ),
    );
    std::thread::sleep(Duration::from_millis(200));
    // The first call may see the dead connection and say so; none hangs or panics.
    let first = store.add(fact("after", "the drop"));
    if let Err(e) = &first {
        assert!(e.to_string().starts_with(&format!("memory database {url}: ")), "{e}");
        store.add(fact("after", "the drop")).expect("connected again");
    }
    assert_eq!(store.list(false).unwrap().len(), 2);
}

#[test]
fn a_database_from_a_newer_version_is_refused() {
    let cluster = Cluster::shared();
    let url = cluster.database();
    drop(PostgresStore::connect(&url, Some(PASSWORD)).unwrap());
    cluster.psql(db_name(&url), "UPDATE reach_memory_meta SET value = '9'");
    let err = PostgresStore::connect(&url, Some(PASSWORD)).unwrap_err().to_string();
    assert!(
        err.ends_with("schema version 9 is newer than this reach reads (1); upgrade reach"),
        "{err}"
    );
}

#[test]
fn hosts_connecting_at_once_create_the_schema_once() {
    let url = Cluster::shared().database();
    let hosts: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PostgresStore::connect(&url, Some(PASSWORD)).map(drop))
        })
        .collect();
    for host in hosts {
        host.join().unwrap().expect("each host connects");
    }
    let store = PostgresStore::connect(&url, Some(PASSWORD)).unwrap();
    store.add(fact("one", "schema")).unwrap();
    assert_eq!(store.list(true).unwrap().len(), 1);
}

#[test]
fn forget_leaves_no_live_row_and_vacuums_at_once() {
    let cluster = Cluster::shared();
    let url = cluster.database();
    let store = PostgresStore::connect(&url, Some(PASSWORD)).unwrap();
    for i in 0..50 {
        store.add(fact(&format!("filler {i}"), "filler text")).unwrap();
    }
    let id = store.add(fact("secret place", "zqxmarker under the desk")).unwrap().entry().id;
    store.forget(id).unwrap();
    let db = db_name(&url);
    assert_eq!(
        cluster.psql(db, "SELECT count(*) FROM reach_memory WHERE text LIKE '%zqxmarker%'"),
        "0"
    );
    // The vacuum ran now, not at some later autovacuum (statistics reach other sessions within
    // a second or so).
    let vacuumed = (0..50).any(|_| {
        let count = cluster.psql(
            db,
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'reach_memory'",
        );
        count != "0" || {
            std::thread::sleep(Duration::from_millis(100));
            false
        }
    });
    assert!(vacuumed, "VACUUM ran after forget");
}

#[test]
fn the_store_can_be_used_from_inside_an_async_runtime() {
    // The host calls its store from async tasks; the blocking client must not
    // try to start a runtime inside the caller's.
    let url = Cluster::shared().database();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = PostgresStore::connect(&url, Some(PASSWORD)).unwrap();
        store.add(fact("async", "called from a task")).unwrap();
        assert_eq!(store.search("task", None, 5).unwrap().len(), 1);
    });
}
