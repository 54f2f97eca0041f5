//! A cap on open sessions. The SDK's [`LocalSessionManager`] closes a
//! session after five idle minutes but opens as many as clients ask for;
//! each holds a task and its channels, so a local process could open them
//! until memory runs out. Past [`MAX_SESSIONS`] a new one is refused.

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Sessions (clients before protocol 2026-07-28) open at once, at most. A
/// person's editors and assistants open a handful, and a session of a
/// client that went away without saying so lingers five minutes; 256 is
/// far above both, with room for a test suite that opens many at once, and
/// keeps what they hold to a few megabytes.
pub const MAX_SESSIONS: usize = 256;

/// Why a session was not opened or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SessionsError {
    /// [`MAX_SESSIONS`] are open.
    #[error(
        "{max} MCP sessions are open, the most this server allows; close clients you no longer \
         use, or wait for idle sessions to end (after 5 minutes)"
    )]
    Full {
        /// The cap.
        max: usize,
    },
    /// The SDK's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// [`LocalSessionManager`] with at most `max` sessions open.
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held while counting and creating, so two `initialize` requests at
    /// once cannot both take the last place.
    creating: tokio::sync::Mutex<()>,
}

impl CappedSessions {
    /// At most `max` sessions.
    pub(crate) fn new(max: usize) -> CappedSessions {
        CappedSessions {
            inner: LocalSessionManager::default(),
            max,
            creating: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether a new session would be refused now.
    pub(crate) async fn full(&self) -> bool {
        self.inner.sessions.read().await.len() >= self.max
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        if self.full().await {
            tracing::warn!(max = self.max, "MCP session refused: too many open");
            return Err(SessionsError::Full { max: self.max });
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No session store is configured, so the SDK never restores; a
        // restore would still be a new session and count against the cap.
        let _creating = self.creating.lock().await;
        if self.full().await {
            return Err(SessionsError::Full { max: self.max });
        }
        Ok(self.inner.restore_session(id).await?)
    }
}
