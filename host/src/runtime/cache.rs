//! The on-disk compile cache: precompiled components keyed by the `.wasm`
//! file's content hash and the engine's configuration, so a restart loads
//! machine code instead of recompiling.
//!
//! A cache entry is machine code that the host loads and runs without
//! further checks (`Component::deserialize` is `unsafe` for that reason), so
//! the host loads only entries it can prove it wrote itself:
//!
//! - Each entry (`….cwasm`) has a 32-byte tag kept apart from it
//!   (`….cwasm.tag`): BLAKE3 keyed with a secret kept *outside* the cache
//!   folder (`<cache folder>.key`, mode 0600, made on first use), over the
//!   entry's name (the `.wasm` digest and the engine's configuration) and
//!   its contents. Whoever can write the cache folder but not read the key
//!   cannot forge an entry, nor pass one skill's code off as another's by
//!   renaming it.
//! - The folder, the key, every entry and its tag must belong to the user
//!   the host runs as and be writable by no one else; otherwise the cache
//!   is not used (or the entry is ignored), with a warning saying what to
//!   fix.
//! - The checked file is then mapped, not copied, so a warm start does not
//!   pay for copying every compiled skill. Between the check and the
//!   mapping only a writer that the ownership check allows — the host's own
//!   user, who can read the key and so forge a tag anyway — could change it.
//!
//! - Hashing a ~37 MB interpreter entry at every start costs more than
//!   mapping it, so once an entry's tag is verified the host keeps a stamp
//!   beside it (`….cwasm.seen`): the same key over the entry's name, its tag
//!   and what the file system says about the file — device, inode, size,
//!   modification and *change* time. Any write to the entry, a rename over
//!   it or a `touch` back to the old time moves its change time (which no
//!   process can set), so a matching stamp means the very bytes that were
//!   verified; anything else is hashed again.
//!
//! Anything that fails a check is compiled again from the `.wasm` file, which
//! is always the source of truth.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Length of the key and of each entry's tag.
const TAG_LEN: usize = 32;

/// Where compiled components are kept, and the key that vouches for them.
#[derive(Clone)]
pub(crate) struct CompileCache {
    dir: Option<PathBuf>,
    key: Option<[u8; TAG_LEN]>,
    engine_key: u64,
}

/// How a component was obtained, for logs and progress output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadSource {
    /// Loaded precompiled code from the cache.
    Cache,
    /// Compiled now (and stored, if the cache is enabled).
    Compiled,
}

impl CompileCache {
    /// A cache in `dir` (none when `None`). A folder or key that fails the
    /// ownership checks turns the cache off for this process, with a warning.
    pub(crate) fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        let engine_key = hasher.finish();
        let key = dir.as_deref().and_then(|dir| match prepare(dir) {
            Ok(key) => Some(key),
            Err(why) => {
                tracing::warn!(
                    cache = %dir.display(),
                    "compile cache not used: {why}; components are compiled at every start"
                );
                None
            }
        });
        CompileCache { dir: if key.is_some() { dir } else { None }, key, engine_key }
    }

    /// The folder, when the cache is in use.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The key file, when the cache is in use.
    pub(crate) fn key_file(&self) -> Option<PathBuf> {
        self.dir.as_deref().map(key_path)
    }

    fn entry(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{:016x}.cwasm", &digest[..32], self.engine_key)))
    }

    /// Load the compiled form of `wasm` (whose blake3 hex digest is
    /// `digest`), compiling and storing it on a miss or a refused entry.
    /// `on_compile` runs before a (slow) compilation, for progress output.
    pub(crate) fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
        on_compile: impl FnOnce(),
    ) -> Result<(Component, LoadSource), wasmtime::Error> {
        let entry = self.entry(digest);
        if let (Some(path), Some(key)) = (entry.as_deref().filter(|p| p.exists()), &self.key) {
            if !tag_path(path).exists() {
                // Written by an older version (or half-written): not a threat,
                // just not vouched for. Compile again and replace it.
                tracing::info!(
                    path = %path.display(),
                    "compile-cache entry has no tag; compiling again"
                );
            } else {
                match check(path, key)
                    .and_then(|()| deserialize(engine, path).map_err(|e| format!("{e:#}")))
                {
                    Ok(component) => return Ok((component, LoadSource::Cache)),
                    // Not an error: compile again from the .wasm and replace it.
                    Err(why) => {
                        tracing::warn!(
                            path = %path.display(),
                            "compile-cache entry refused, compiling again: {why}"
                        )
                    }
                }
            }
        }
        on_compile();
        let component = Component::new(engine, wasm)?;
        if let (Some(path), Some(key)) = (entry, &self.key)
            && let Err(err) = store(&component, &path, key)
        {
            tracing::warn!(
                path = %path.display(),
                error = %err,
                "could not write the compile cache; next start compiles again"
            );
        }
        Ok((component, LoadSource::Compiled))
    }
}

/// The key file for a cache folder: beside it, never inside it.
fn key_path(dir: &Path) -> PathBuf {
    let mut name =
        dir.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "agent-reach-cache".into());
    name.push(".key");
    dir.with_file_name(name)
}

/// Make the folder (0700) if needed, check it, and load or make the key.
fn prepare(dir: &Path) -> Result<[u8; TAG_LEN], String> {
    create_private_dir(dir).map_err(|e| format!("cannot create the folder: {e}"))?;
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot read the folder: {e}"))?;
    check_owned(&meta, 0o022).map_err(|why| format!("the folder {why}"))?;
    let path = key_path(dir);
    if !path.exists() {
        make_key(&path).map_err(|e| format!("cannot create the key {}: {e}", path.display()))?;
    }
    let meta = std::fs::symlink_metadata(&path)
        .map_err(|e| format!("cannot read the key {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("the key {} is not a plain file", path.display()));
    }
    check_owned(&meta, 0o077).map_err(|why| format!("the key {} {why}", path.display()))?;
    let bytes =
        std::fs::read(&path).map_err(|e| format!("cannot read the key {}: {e}", path.display()))?;
    bytes.try_into().map_err(|_| {
        format!("the key {} is not {TAG_LEN} bytes; delete it to make a new one", path.display())
    })
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Write 32 random bytes to a new file (0600) and move it into place
/// without replacing one a concurrent start made first.
fn make_key(path: &Path) -> std::io::Result<()> {
    let mut key = [0u8; TAG_LEN];
    fill_random(&mut key)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    // NamedTempFile is created 0600.
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&key)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e.error),
    }
}

#[cfg(unix)]
fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        filled +=
            rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty())?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn fill_random(_: &mut [u8]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no random source for the cache key on this platform",
    ))
}

/// The file or folder belongs to the user the host runs as and has none of
/// the permission bits in `forbidden` (0o022: writable by group or others).
#[cfg(unix)]
fn check_owned(meta: &std::fs::Metadata, forbidden: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!("belongs to user {}, not to {me} who runs the host", meta.uid()));
    }
    if meta.mode() & forbidden != 0 {
        return Err(format!(
            "has mode {:o}, open to other users (fix: chmod go-rwx)",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owned(_: &std::fs::Metadata, _: u32) -> Result<(), String> {
    Ok(())
}

/// What the tag covers: the entry's name, then its contents.
fn tag(key: &[u8; TAG_LEN], name: &[u8], code: &[u8]) -> blake3::Hash {
    let mut hasher = tag_hasher(key, name);
    hasher.update(code);
    hasher.finalize()
}

/// A hasher that has taken in the name; the contents come next.
fn tag_hasher(key: &[u8; TAG_LEN], name: &[u8]) -> blake3::Hasher {
    let mut hasher = blake3::Hasher::new_keyed(key);
    hasher.update(&(name.len() as u64).to_le_bytes());
    hasher.update(name);
    hasher
}

/// The tag of the entry at `path`, read in blocks: an interpreter's entry is ~37 MB, and
/// reading it whole into a fresh buffer cost more than hashing it (page faults on every
/// new page), once per start.
fn tag_of_file(key: &[u8; TAG_LEN], path: &Path) -> std::io::Result<blake3::Hash> {
    let mut hasher = tag_hasher(key, &entry_name(path));
    // 1 MiB blocks: large enough for blake3 to hash many chunks at once with SIMD.
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize())
}

fn entry_name(path: &Path) -> Vec<u8> {
    path.file_name().map(|n| n.to_string_lossy().into_owned().into_bytes()).unwrap_or_default()
}

/// Where an entry's tag is kept: beside it, not in it.
fn tag_path(entry: &Path) -> PathBuf {
    let mut name = entry.as_os_str().to_owned();
    name.push(".tag");
    PathBuf::from(name)
}

/// `Ok` when the entry and its tag are plain files of ours that no one else
/// can write, and the tag is the keyed hash of the entry's name and bytes.
fn check(path: &Path, key: &[u8; TAG_LEN]) -> Result<(), String> {
    let tag_file = tag_path(path);
    let mut entry_meta = None;
    for file in [path, tag_file.as_path()] {
        let meta =
            std::fs::symlink_metadata(file).map_err(|e| format!("{}: {e}", file.display()))?;
        if !meta.is_file() {
            return Err(format!("{} is not a plain file", file.display()));
        }
        check_owned(&meta, 0o022).map_err(|why| format!("{} {why}", file.display()))?;
        entry_meta.get_or_insert(meta);
    }
    let stored: [u8; TAG_LEN] = std::fs::read(&tag_file)
        .map_err(|e| e.to_string())?
        .try_into()
        .map_err(|_| "its tag is not 32 bytes".to_owned())?;
    let stored = blake3::Hash::from(stored);
    let stamp = entry_meta.as_ref().and_then(|meta| stamp(key, path, &stored, meta));
    if let Some(stamp) = &stamp
        && seen_matches(path, stamp)
    {
        return Ok(());
    }
    let computed = tag_of_file(key, path).map_err(|e| e.to_string())?;
    // blake3::Hash compares in constant time.
    if computed != stored {
        return Err("its tag does not match: not written by this host (or damaged)".into());
    }
    if let Some(stamp) = stamp
        && entry_meta.as_ref().is_some_and(settled)
    {
        remember_seen(path, &stamp);
    }
    Ok(())
}

/// How long an entry must have been left alone before its stamp is kept.
/// The kernel's clock for change times ticks in milliseconds, so a write
/// landing in the same tick as the verified one would keep the same change
/// time; an entry unchanged for this long cannot be written again within a
/// tick of the time it carries.
#[cfg(not(test))]
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);
#[cfg(test)]
const SETTLED: std::time::Duration = std::time::Duration::ZERO;

/// The entry's last change is at least [`SETTLED`] old.
#[cfg(unix)]
fn settled(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let changed = std::time::UNIX_EPOCH
        + std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec().max(0) as u32);
    changed.elapsed().is_ok_and(|age| age >= SETTLED)
}

#[cfg(not(unix))]
fn settled(_: &std::fs::Metadata) -> bool {
    false
}

/// Where the stamp of an entry verified before is kept.
fn seen_path(entry: &Path) -> PathBuf {
    let mut name = entry.as_os_str().to_owned();
    name.push(".seen");
    PathBuf::from(name)
}

/// The stamp of an entry whose tag is `tag` and whose file system facts are
/// `meta`: keyed, so only the host can make one. `None` where the platform
/// gives no change time (the entry is then hashed at every load).
#[cfg(unix)]
fn stamp(
    key: &[u8; TAG_LEN],
    path: &Path,
    tag: &blake3::Hash,
    meta: &std::fs::Metadata,
) -> Option<blake3::Hash> {
    use std::os::unix::fs::MetadataExt;
    let mut hasher = tag_hasher(key, &entry_name(path));
    hasher.update(b"seen");
    hasher.update(tag.as_bytes());
    for fact in [meta.dev(), meta.ino(), meta.size()] {
        hasher.update(&fact.to_le_bytes());
    }
    for fact in [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()] {
        hasher.update(&fact.to_le_bytes());
    }
    Some(hasher.finalize())
}

#[cfg(not(unix))]
fn stamp(
    _: &[u8; TAG_LEN],
    _: &Path,
    _: &blake3::Hash,
    _: &std::fs::Metadata,
) -> Option<blake3::Hash> {
    None
}

/// The entry's stamp is present, ours, and equal to `stamp`.
fn seen_matches(path: &Path, stamp: &blake3::Hash) -> bool {
    let seen = seen_path(path);
    let Ok(meta) = std::fs::symlink_metadata(&seen) else { return false };
    if !meta.is_file() || check_owned(&meta, 0o022).is_err() {
        return false;
    }
    match std::fs::read(&seen).map(<[u8; TAG_LEN]>::try_from) {
        // blake3::Hash compares in constant time.
        Ok(Ok(bytes)) => blake3::Hash::from(bytes) == *stamp,
        _ => false,
    }
}

/// Keep the stamp so the next start skips the hash. A failure costs only
/// that: the entry is hashed again next time.
fn remember_seen(path: &Path, stamp: &blake3::Hash) {
    let written = path.parent().ok_or_else(|| std::io::Error::other("no folder")).and_then(|dir| {
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(stamp.as_bytes())?;
        tmp.persist(seen_path(path)).map(drop).map_err(|e| e.error)
    });
    if let Err(err) = written {
        tracing::debug!(path = %path.display(), error = %err, "could not keep the verified stamp");
    }
}

#[expect(unsafe_code, reason = "loading precompiled machine code is unsafe by nature")]
fn deserialize(engine: &Engine, path: &Path) -> Result<Component, wasmtime::Error> {
    // SAFETY: `check` just verified, with the host's key, that this file is
    // what `store` below wrote from a component this engine compiled, and
    // that only the host's own user can change it. wasmtime also checks the
    // header and that the engine configuration matches.
    unsafe { Component::deserialize_file(engine, path) }
}

fn store(
    component: &Component,
    path: &Path,
    key: &[u8; TAG_LEN],
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dir = path.parent().ok_or("cache entry has no parent folder")?;
    let bytes = component.serialize()?;
    let tag = tag(key, &entry_name(path), &bytes);
    // Each written to a temporary file (0600) and renamed, so a concurrent
    // reader never sees half a file; a reader that sees a new entry with the
    // old tag refuses it and compiles.
    for (target, content) in
        [(path.to_owned(), bytes.as_slice()), (tag_path(path), tag.as_bytes().as_slice())]
    {
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(content)?;
        tmp.persist(target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "(component (core module (func (export \"one\"))))";
    const TWO: &str = "(component (core module (func (export \"two\"))))";

    fn wasm(text: &str) -> (Vec<u8>, String) {
        let bytes = wat::parse_str(text).expect("wat");
        let digest = blake3::hash(&bytes).to_hex().to_string();
        (bytes, digest)
    }

    fn load(cache: &CompileCache, engine: &Engine, text: &str) -> LoadSource {
        let (bytes, digest) = wasm(text);
        cache.load(engine, &bytes, &digest, || {}).expect("load").1
    }

    #[test]
    fn the_hosts_own_entries_load_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::new(&engine, Some(dir.path().join("cache")));
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Compiled);
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Cache);
        assert!(
            dir.path().join("cache.key").is_file(),
            "the key lives beside the folder, not in it"
        );
    }

    #[test]
    fn a_planted_entry_is_never_loaded() {
        // Regression: any file under the entry's name was mapped and run,
        // so whoever could write the cache could run code in the host.
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::new(&engine, Some(dir.path().join("cache")));
        let (_, digest_one) = wasm(ONE);
        let entry = cache.entry(&digest_one).unwrap();

        // Another component's genuine machine code, without a tag ...
        let (two, _) = wasm(TWO);
        let planted = Component::new(&engine, &two).unwrap().serialize().unwrap();
        std::fs::write(&entry, &planted).unwrap();
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Compiled);

        // ... or the host's own entry for TWO, with its tag, renamed to ONE's name.
        assert_eq!(load(&cache, &engine, TWO), LoadSource::Compiled);
        let (_, digest_two) = wasm(TWO);
        let two_entry = cache.entry(&digest_two).unwrap();
        std::fs::copy(&two_entry, &entry).unwrap();
        std::fs::copy(tag_path(&two_entry), tag_path(&entry)).unwrap();
        assert_eq!(
            load(&cache, &engine, ONE),
            LoadSource::Compiled,
            "a tag binds the entry to its name"
        );
        assert_eq!(
            load(&cache, &engine, ONE),
            LoadSource::Cache,
            "and the rewritten entry is good again"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_verified_entry_is_not_hashed_again_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::new(&engine, Some(dir.path().join("cache")));
        let key = cache.key.unwrap();
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Compiled);
        assert_eq!(load(&cache, &engine, TWO), LoadSource::Compiled);
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Cache, "verified by hashing");
        let (_, digest) = wasm(ONE);
        let entry = cache.entry(&digest).unwrap();
        let stored = blake3::Hash::from(
            <[u8; TAG_LEN]>::try_from(std::fs::read(tag_path(&entry)).unwrap()).unwrap(),
        );
        let current = |path: &Path| {
            stamp(&key, path, &stored, &std::fs::symlink_metadata(path).unwrap()).unwrap()
        };
        assert!(seen_matches(&entry, &current(&entry)), "the next start skips the hash");

        // Regression guard: rewrite the entry in place with another skill's
        // genuine code of the same size and put its modification time back.
        // Only the change time tells, and it must send the entry to the hash.
        let (_, digest_two) = wasm(TWO);
        let two = std::fs::read(cache.entry(&digest_two).unwrap()).unwrap();
        let one = std::fs::read(&entry).unwrap();
        assert_eq!(one.len(), two.len(), "the test needs entries of one size");
        let modified = std::fs::metadata(&entry).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut file = std::fs::OpenOptions::new().write(true).open(&entry).unwrap();
        file.write_all(&two).unwrap();
        file.set_times(std::fs::FileTimes::new().set_modified(modified)).unwrap();
        drop(file);
        assert!(!seen_matches(&entry, &current(&entry)), "a changed entry is hashed again");
        assert_eq!(
            load(&cache, &engine, ONE),
            LoadSource::Compiled,
            "another skill's code under this name is refused"
        );
    }

    #[cfg(unix)]
    #[test]
    fn files_and_folders_open_to_others_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let folder = dir.path().join("cache");
        let cache = CompileCache::new(&engine, Some(folder.clone()));
        assert_eq!(load(&cache, &engine, ONE), LoadSource::Compiled);
        let (_, digest) = wasm(ONE);
        let entry = cache.entry(&digest).unwrap();
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(
            load(&cache, &engine, ONE),
            LoadSource::Compiled,
            "a world-writable entry is not trusted"
        );

        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        let open = CompileCache::new(&engine, Some(folder.clone()));
        assert!(open.dir().is_none(), "a world-writable folder turns the cache off");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();

        std::fs::set_permissions(
            dir.path().join("cache.key"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let readable_key = CompileCache::new(&engine, Some(folder));
        assert!(readable_key.dir().is_none(), "a key others can read vouches for nothing");
    }
}
