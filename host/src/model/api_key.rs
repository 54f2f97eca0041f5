//! The key a model client sends, as a type that cannot be printed by
//! accident: `Debug` says `<redacted>`, and there is no `Display`.

/// An API key for a model server. The clients send it in a sensitive header
/// (which reqwest never prints either); everywhere else it shows as
/// `<redacted>`, so a config can derive `Debug` and still go to a log.
///
/// ```
/// use agent_reach::model::ApiKey;
/// let key = ApiKey::from("sk-secret");
/// assert_eq!(format!("{:?}", Some(&key)), "Some(<redacted>)");
/// assert_eq!(key.expose(), "sk-secret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key itself, for the one place that must send it or mask it
    /// elsewhere (e.g. the run's list of secrets to scrub from logs).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> ApiKey {
        ApiKey(key)
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> ApiKey {
        ApiKey(key.to_owned())
    }
}

/// The endpoint and key a client reads from its two environment variables
/// (`url_var`, `key_var`); empty values count as unset, because a shell
/// `export OPENAI_API_KEY=` means "none", not an empty key.
pub(crate) fn from_lookup(
    lookup: impl Fn(&str) -> Option<String>,
    url_var: &str,
    key_var: &str,
) -> (Option<String>, Option<ApiKey>) {
    let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    (var(url_var), var(key_var).map(ApiKey))
}
