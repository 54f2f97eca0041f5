//! The store's connection: a thread of its own with a single-threaded
//! runtime and the client, connected again when it dropped, every call
//! under a deadline (see the [store's docs](super)).

use std::str::FromStr as _;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_postgres::Client;

use super::CONNECT_TIMEOUT;
use crate::memory::MemoryError;

/// The connection's thread, and the database's name for messages.
pub(super) struct Worker {
    jobs: Mutex<mpsc::Sender<Job>>,
    /// The URL without its password.
    name: Arc<str>,
}

impl Worker {
    /// Check `url`, then start the thread that will connect to it with
    /// `password` (it connects at the first call).
    pub(super) fn start(url: &str, password: Option<&str>) -> Result<Worker, MemoryError> {
        let name: Arc<str> = display_url(url).into();
        let invalid = |reason: String| MemoryError::Invalid { field: "database URL", reason };
        crate::policy::check_url(url).map_err(invalid)?;
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| invalid(format!("{name:?} is not one PostgreSQL reads: {e}")))?;
        if let Some(password) = password {
            config.password(password);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("agent-reach");
        // A dead peer is found in about a minute, not the system's two hours.
        config.keepalives_idle(Duration::from_secs(30));
        config.keepalives_interval(Duration::from_secs(10));
        config.keepalives_retries(3);
        config.tcp_user_timeout(Duration::from_secs(60));
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
                MemoryError::Database {
                    path: name.to_string(),
                    message: format!("cannot start its runtime: {e}"),
                }
            })?;
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(
            crate::tls::client_config().as_ref().clone(),
        );
        let mut connection =
            Connection { runtime, config, tls, client: None, name: Arc::clone(&name) };
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("reach-memory-postgres".into())
            .spawn(move || {
                // Ends when the worker (the only sender) is dropped with its store.
                for job in queue {
                    job(&mut connection);
                }
            })
            .map_err(|e| MemoryError::Database {
                path: name.to_string(),
                message: format!("cannot start its thread: {e}"),
            })?;
        Ok(Worker { jobs: Mutex::new(jobs), name })
    }

    /// The URL without its password.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// Run `f` with the client on the connection's thread within `limit`,
    /// and wait for it.
    pub(super) fn call_within<T: Send + 'static>(
        &self,
        limit: Duration,
        f: impl AsyncFnOnce(&mut Client, &str) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |connection: &mut Connection| {
            let _ = reply.send(connection.run(limit, f));
        });
        let gone = || MemoryError::Database {
            path: self.name.to_string(),
            message: "its connection thread has stopped".into(),
        };
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner).send(job).map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

/// A piece of work for the connection's thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The connection's thread's state: its runtime, the client while
/// connected, and what it takes to connect again.
struct Connection {
    runtime: tokio::runtime::Runtime,
    config: tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    client: Option<Client>,
    name: Arc<str>,
}

impl Connection {
    /// Run `f` with a connected client (connecting again when there is none
    /// or it dropped), within the connect timeout and then `limit`. On a
    /// timeout the client is dropped, closing its socket.
    fn run<T>(
        &mut self,
        limit: Duration,
        f: impl AsyncFnOnce(&mut Client, &str) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let Connection { runtime, config, tls, client, name } = self;
        let connect_limit = config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
        runtime.block_on(async {
            if client.as_ref().is_none_or(Client::is_closed) {
                *client = None;
                let connecting = connect(config, tls.clone(), name);
                match tokio::time::timeout(connect_limit, connecting).await {
                    Ok(connected) => *client = Some(connected?),
                    Err(_) => return Err(timed_out(name, "connecting", connect_limit)),
                }
            }
            let Some(connected) = client.as_mut() else { unreachable!("connected above") };
            let outcome = tokio::time::timeout(limit, f(connected, name)).await;
            outcome.unwrap_or_else(|_| {
                *client = None;
                Err(timed_out(name, "a call", limit))
            })
        })
    }
}

/// A new connection, its socket served by a task on this thread's runtime.
async fn connect(
    config: &tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    name: &str,
) -> Result<Client, MemoryError> {
    let (client, connection) = config.connect(tls).await.map_err(|e| database(name, &e))?;
    // Ends with an error when the socket does; the client then reports itself closed.
    tokio::spawn(connection);
    // Bounded waits; the stop-word notices of the text search are noise.
    client
        .batch_execute(
            "SET lock_timeout = '10s'; SET statement_timeout = '60s'; \
             SET client_min_messages = warning",
        )
        .await
        .map_err(|e| database(name, &e))?;
    Ok(client)
}

fn timed_out(name: &str, what: &str, limit: Duration) -> MemoryError {
    MemoryError::Database {
        path: name.to_owned(),
        message: format!(
            "{what} took longer than {} s; the server is slow or not answering",
            limit.as_secs()
        ),
    }
}

/// The URL without a password (and without the `password` parameter), so
/// it can go into messages and logs.
pub(super) fn display_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_password(None);
            let kept: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| k != "password")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if kept.is_empty() {
                parsed.set_query(None);
            } else {
                parsed.query_pairs_mut().clear().extend_pairs(kept);
            }
            parsed.to_string()
        }
        Err(_) => "a PostgreSQL database".to_owned(),
    }
}

/// What PostgreSQL or the connection said, on one line, with the server's
/// own words (message, detail, hint) when it answered.
pub(super) fn database(name: &str, e: &tokio_postgres::Error) -> MemoryError {
    let message = match e.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_owned();
            for extra in [db.detail(), db.hint()].into_iter().flatten() {
                text.push_str(" — ");
                text.push_str(extra);
            }
            text
        }
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                text.push_str(": ");
                text.push_str(&cause.to_string());
                source = cause.source();
            }
            text
        }
    };
    MemoryError::Database { path: name.to_owned(), message }
}
