//! The one TLS client configuration the host uses for every outgoing
//! connection: the skills' `wasi:http`, the model clients, the shared
//! memory database.

use std::sync::{Arc, OnceLock};

/// rustls with the ring provider and the bundled webpki roots: no OpenSSL
/// or aws-lc to build, and the same trust on every machine whatever its
/// certificate store. Built once.
pub(crate) fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}
