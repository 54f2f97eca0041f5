//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`: where a skill comes from.
//!
//! The registry is always written out: a reference without one would
//! silently mean Docker Hub to most tools, and the place a skill comes from
//! is part of what an operator trusts. Plain HTTP is allowed only for a
//! loopback registry ([`OciRef::plain_http`]).

use super::OciError;
use std::fmt;
use std::net::IpAddr;

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";

/// A parsed `oci://` reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OciRef {
    /// `host[:port]`, e.g. `ghcr.io` or `127.0.0.1:5000`.
    pub registry: String,
    /// The repository path, e.g. `acme/skills/echo`.
    pub repository: String,
    /// The tag, when given.
    pub tag: Option<String>,
    /// The manifest digest (`sha256:…`), when given.
    pub digest: Option<String>,
}

impl OciRef {
    /// Parse `oci://REGISTRY/REPO[:TAG][@sha256:HEX]`; the error says which part is wrong.
    pub fn parse(text: &str) -> Result<Self, OciError> {
        let bad =
            |why: &str| OciError::Reference { reference: text.to_owned(), reason: why.into() };
        let rest = text.strip_prefix(SCHEME).ok_or_else(|| {
            bad("it must start with oci://, e.g. oci://ghcr.io/acme/skills/echo:1.0.0")
        })?;
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no repository after the registry (oci://HOST/REPO)"))?;
        if registry.is_empty() || !registry_is_valid(registry) {
            return Err(bad("the registry must be a host name or address with an optional port"));
        }
        let (path, digest) = match path.split_once('@') {
            Some((p, d)) => (p, Some(d)),
            None => (path, None),
        };
        if let Some(d) = digest {
            let hex = d.strip_prefix("sha256:").unwrap_or("");
            if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(bad("a digest is sha256: and 64 lowercase hex characters"));
            }
        }
        // A tag follows the last `:` after the last `/` (a port lives in the registry part).
        let last = path.rsplit('/').next().unwrap_or(path);
        let (repository, tag) = match last.rsplit_once(':') {
            Some((_, tag)) => (&path[..path.len() - tag.len() - 1], Some(tag)),
            None => (path, None),
        };
        if !repository_is_valid(repository) {
            return Err(bad(
                "a repository is lowercase path components of [a-z0-9] separated by . _ - or /",
            ));
        }
        if let Some(t) = tag
            && !tag_is_valid(t)
        {
            return Err(bad(
                "a tag is up to 128 characters of [A-Za-z0-9_.-], not starting with . or -",
            ));
        }
        Ok(OciRef {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }

    /// The same repository at `digest` (the tag kept for display).
    pub fn at_digest(&self, digest: &str) -> OciRef {
        OciRef { digest: Some(digest.to_owned()), ..self.clone() }
    }

    /// The same repository at `tag`, without a digest.
    pub fn at_tag(&self, tag: &str) -> OciRef {
        OciRef { tag: Some(tag.to_owned()), digest: None, ..self.clone() }
    }

    /// `oci://REGISTRY/REPO` alone: what `origin` in the table compares.
    pub fn repository_url(&self) -> String {
        format!("{SCHEME}{}/{}", self.registry, self.repository)
    }

    /// Whether the registry is on this machine (`localhost`, `127.0.0.0/8`,
    /// `::1`): the only registries reached over plain HTTP, since nothing
    /// else on the path can read or change what a loopback registry sends.
    pub fn plain_http(&self) -> bool {
        let host = host_of(&self.registry);
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for OciRef {
    type Err = OciError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OciRef::parse(s)
    }
}

/// `host` of `host:port` or `[v6]:port`.
fn host_of(registry: &str) -> &str {
    if let Some(inner) = registry.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    registry.rsplit_once(':').map_or(registry, |(h, _)| h)
}

fn registry_is_valid(registry: &str) -> bool {
    let host = host_of(registry);
    let port_ok = match registry.strip_prefix('[') {
        Some(inner) => match inner.split_once(']') {
            Some((_, "")) => true,
            Some((_, rest)) => rest.strip_prefix(':').is_some_and(is_port),
            None => false,
        },
        None => registry.split_once(':').is_none_or(|(_, p)| is_port(p)),
    };
    let host_ok = host.parse::<IpAddr>().is_ok()
        || (!host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }));
    port_ok && host_ok
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.parse::<u16>().is_ok_and(|n| n > 0)
}

/// The OCI distribution grammar for a repository name.
fn repository_is_valid(repo: &str) -> bool {
    !repo.is_empty()
        && repo.len() <= 255
        && repo.split('/').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
                && !part.contains("..")
        })
}

fn tag_is_valid(tag: &str) -> bool {
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_parse_into_their_parts() {
        let cases: &[(&str, &str, &str, Option<&str>, bool)] = &[
            ("oci://ghcr.io/acme/echo:1.0.0", "ghcr.io", "acme/echo", Some("1.0.0"), false),
            (
                "oci://127.0.0.1:5000/skills/echo:v2",
                "127.0.0.1:5000",
                "skills/echo",
                Some("v2"),
                false,
            ),
            ("oci://localhost:5000/echo", "localhost:5000", "echo", None, false),
            ("oci://[::1]:5000/a/b:t", "[::1]:5000", "a/b", Some("t"), false),
            (
                "oci://registry.example.com/a.b/c_d/e-f:x_y",
                "registry.example.com",
                "a.b/c_d/e-f",
                Some("x_y"),
                false,
            ),
        ];
        for (text, registry, repo, tag, _) in cases {
            let r = OciRef::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
                (*registry, *repo, *tag)
            );
            assert_eq!(r.to_string(), *text, "round trip");
        }
        let r = OciRef::parse(&format!("oci://ghcr.io/acme/echo:1.0.0@{D}")).unwrap();
        assert_eq!((r.tag.as_deref(), r.digest.as_deref()), (Some("1.0.0"), Some(D)));
        let r = OciRef::parse(&format!("oci://ghcr.io/acme/echo@{D}")).unwrap();
        assert_eq!((r.tag, r.digest.as_deref()), (None, Some(D)));
    }

    #[test]
    fn malformed_references_say_what_is_wrong() {
        let cases: &[(&str, &str)] = &[
            ("ghcr.io/acme/echo:1", "must start with oci://"),
            ("https://ghcr.io/acme/echo", "must start with oci://"),
            ("oci://ghcr.io", "names no repository"),
            ("oci:///echo", "registry must be"),
            ("oci://gh cr.io/echo", "registry must be"),
            ("oci://host:99999/echo", "registry must be"),
            ("oci://host:/echo", "registry must be"),
            ("oci://ghcr.io/Acme/echo", "repository is lowercase"),
            ("oci://ghcr.io/acme//echo", "repository is lowercase"),
            ("oci://ghcr.io/acme/../echo", "repository is lowercase"),
            ("oci://ghcr.io/acme/echo:", "tag is"),
            ("oci://ghcr.io/acme/echo:-x", "tag is"),
            ("oci://ghcr.io/acme/echo@sha256:abc", "digest is"),
            ("oci://ghcr.io/acme/echo@md5:0123", "digest is"),
        ];
        for (text, says) in cases {
            let err = OciRef::parse(text).expect_err(text).to_string();
            assert!(err.contains(says), "{text}: {err}");
            assert!(err.contains(text), "{text}: names the reference: {err}");
        }
    }

    #[test]
    fn plain_http_only_for_loopback_registries() {
        let cases: &[(&str, bool)] = &[
            ("oci://127.0.0.1:5000/a", true),
            ("oci://127.8.9.1/a", true),
            ("oci://localhost:5000/a", true),
            ("oci://LOCALHOST/a", true),
            ("oci://[::1]:5000/a", true),
            ("oci://10.0.0.1:5000/a", false),
            ("oci://localhost.evil.com/a", false),
            ("oci://127.0.0.1.nip.io/a", false),
            ("oci://ghcr.io/a", false),
            ("oci://[::2]:5000/a", false),
        ];
        for (text, plain) in cases {
            assert_eq!(OciRef::parse(text).unwrap().plain_http(), *plain, "{text}");
        }
    }
}
