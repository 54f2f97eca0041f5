//! One registry connection: transport, timeouts and credentials.

use super::{OciError, OciRef};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use std::fmt;
use std::time::Duration;

/// The variables a user name and password for the registry are read from
/// (they win over the Docker config file).
pub const USERNAME_VAR: &str = "REACH_REGISTRY_USERNAME";
/// See [`USERNAME_VAR`].
pub const PASSWORD_VAR: &str = "REACH_REGISTRY_PASSWORD";

/// Registry credentials. `Debug` and `Display` never show the secret.
#[derive(Clone, Default)]
pub enum Credentials {
    /// No credentials.
    #[default]
    Anonymous,
    /// User name and password (or token as password).
    Basic {
        /// The user.
        username: String,
        /// The secret.
        password: String,
    },
    /// A bearer token (an identity token from the Docker config).
    Bearer(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("anonymous"),
            Credentials::Basic { username, .. } => write!(f, "user {username} (password hidden)"),
            Credentials::Bearer(_) => f.write_str("a token (hidden)"),
        }
    }
}

impl Credentials {
    /// [`USERNAME_VAR`] and [`PASSWORD_VAR`] when both are set, else the
    /// Docker config file (`$DOCKER_CONFIG/config.json` or
    /// `~/.docker/config.json`, credential helpers included) for `registry`,
    /// else anonymous. Where they came from is returned for the log.
    pub fn lookup(registry: &str) -> (Credentials, &'static str) {
        if let (Ok(username), Ok(password)) =
            (std::env::var(USERNAME_VAR), std::env::var(PASSWORD_VAR))
        {
            return (Credentials::Basic { username, password }, "the environment");
        }
        use docker_credential::DockerCredential;
        match docker_credential::get_credential(registry) {
            Ok(DockerCredential::UsernamePassword(username, password)) => {
                (Credentials::Basic { username, password }, "the Docker config file")
            }
            Ok(DockerCredential::IdentityToken(token)) => {
                (Credentials::Bearer(token), "the Docker config file")
            }
            Err(_) => (Credentials::Anonymous, "none found"),
        }
    }

    pub(crate) fn client_auth(&self) -> RegistryAuth {
        match self {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.clone())
            }
            Credentials::Bearer(t) => RegistryAuth::Bearer(t.clone()),
        }
    }
}

/// A client for one registry.
pub struct Registry {
    pub(crate) client: oci_client::Client,
    pub(crate) auth: RegistryAuth,
    /// `host[:port]`.
    pub registry: String,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("registry", &self.registry).finish_non_exhaustive()
    }
}

impl Registry {
    /// A client for the registry `reference` names, with `credentials`.
    /// HTTPS, except for a loopback registry (plain HTTP there, since tests
    /// and local mirrors run without certificates and nothing on the path
    /// can read or change loopback traffic).
    pub fn connect(reference: &OciRef, credentials: &Credentials) -> Result<Self, OciError> {
        install_ring();
        let protocol = if reference.plain_http() {
            ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            user_agent: concat!("agent-reach/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        };
        Ok(Registry {
            client: oci_client::Client::new(config),
            auth: credentials.client_auth(),
            registry: reference.registry.clone(),
        })
    }

    /// [`Registry::connect`] with [`Credentials::lookup`].
    pub fn connect_with_lookup(reference: &OciRef) -> Result<Self, OciError> {
        let (credentials, from) = Credentials::lookup(&reference.registry);
        tracing::debug!(registry = %reference.registry, credentials = %credentials, from, "registry credentials");
        Self::connect(reference, &credentials)
    }

    /// Every tag of the repository (pages followed; at most 10,000).
    pub async fn tags(&self, reference: &OciRef) -> Result<Vec<String>, OciError> {
        let mut tags: Vec<String> = Vec::new();
        let mut last: Option<String> = None;
        let image = reference.at_tag("latest").client_ref();
        loop {
            let page = self
                .client
                .list_tags(&image, &self.auth, Some(1000), last.as_deref())
                .await
                .map_err(|e| OciError::from_client(reference, e))?;
            let n = page.tags.len();
            tags.extend(page.tags);
            if n < 1000 || tags.len() >= 10_000 {
                break;
            }
            last = tags.last().cloned();
        }
        Ok(tags)
    }
}

/// `oci-client` builds its own reqwest client, which takes the process's
/// rustls provider: make that ring, as everywhere else in the host (no
/// aws-lc or OpenSSL). Certificates are checked against the system's store.
fn install_ring() {
    // Err means a provider is installed already: keep it.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl OciRef {
    /// The `oci-client` reference (digest first when both are known, so the
    /// registry cannot substitute another manifest for a moved tag).
    pub(crate) fn client_ref(&self) -> oci_client::Reference {
        match (&self.digest, &self.tag) {
            (Some(d), _) => oci_client::Reference::with_digest(
                self.registry.clone(),
                self.repository.clone(),
                d.clone(),
            ),
            (None, Some(t)) => oci_client::Reference::with_tag(
                self.registry.clone(),
                self.repository.clone(),
                t.clone(),
            ),
            (None, None) => oci_client::Reference::with_tag(
                self.registry.clone(),
                self.repository.clone(),
                "latest".into(),
            ),
        }
    }
}
