//! The journal's hook in the WASI filesystem: wasmtime-wasi's
//! `wasi:filesystem/types` with every change that reaches a writable grant
//! journaled first (see [`crate::journal`]). It is the host's layer, under
//! any guest language: a component cannot write, create, truncate, delete,
//! rename, link or make a folder without passing here.
//!
//! Each method delegates to wasmtime-wasi's own implementation, which still
//! confines every path to its grant and enforces read-only grants; this
//! layer only adds "keep what is there first". A change whose prior state
//! cannot be kept is refused (`quota` for the budget, `io` otherwise), and
//! the reason is kept for the call's error.

use super::state::StoreState;
use crate::error::ToolFailure;
use crate::journal::{CallJournal, JournalError};
use cap_std::fs::Dir;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::{HasData, Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsError, FsResult};

/// What the hook knows in one store: the writable grants, the folders the
/// guest holds inside them, and the call's journal.
#[derive(Default)]
pub(crate) struct FsJournal {
    /// Writable grants: the host path and a handle for the journal (`None`:
    /// it could not be opened, and every change there is refused).
    grants: Vec<(PathBuf, Option<Arc<Dir>>)>,
    /// Directory descriptors (by resource rep) → grant and path inside.
    dirs: HashMap<u32, (usize, PathBuf)>,
    /// The call's journal; `None`: nothing is journaled.
    pub(crate) call: Option<CallJournal>,
    /// Why the last refused change was refused.
    pub(crate) refused: Option<String>,
}

impl FsJournal {
    /// A hook for `grants` (host path, handle), journaling into `call`.
    pub(crate) fn new(
        grants: Vec<(PathBuf, Option<Arc<Dir>>)>,
        call: Option<CallJournal>,
    ) -> FsJournal {
        FsJournal { grants, call, ..FsJournal::default() }
    }

    /// The guest was handed preopen `rep` for host folder `path`.
    pub(crate) fn preopened(&mut self, rep: u32, path: &str) {
        if let Some(index) = self.grants.iter().position(|(p, _)| p.as_os_str() == path) {
            self.dirs.insert(rep, (index, PathBuf::new()));
        }
    }

    /// Where `path` under descriptor `rep` is: grant and path inside, when
    /// `rep` is a folder in a writable grant. `Err` when `path` climbs out
    /// of the grant (wasmtime-wasi refuses that too).
    fn resolve(&self, rep: u32, path: &str) -> Result<Option<(usize, PathBuf)>, ErrorCode> {
        let Some((grant, base)) = self.dirs.get(&rep) else { return Ok(None) };
        let mut out = base.clone();
        for component in Path::new(path).components() {
            match component {
                Component::Normal(name) => out.push(name),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(ErrorCode::NotPermitted);
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(ErrorCode::NotPermitted),
            }
        }
        Ok(Some((*grant, out)))
    }

    /// Keep what `path` under `rep` holds before it changes.
    fn before(&mut self, rep: u32, path: &str, deep: bool) -> Result<(), ErrorCode> {
        if self.call.is_none() {
            return Ok(());
        }
        let Some((grant, rel)) = self.resolve(rep, path)? else { return Ok(()) };
        if rel.as_os_str().is_empty() {
            // The grant itself: wasmtime-wasi does not let it be removed or moved.
            return Ok(());
        }
        let (root, dir) = &self.grants[grant];
        let Some(dir) = dir else {
            self.refused = Some(format!(
                "{}: the journal cannot open this grant, so nothing in it may change",
                root.display()
            ));
            return Err(ErrorCode::Io);
        };
        let call = self.call.as_mut().expect("checked above");
        match call.before_change(root, dir, &rel, deep) {
            Ok(()) => Ok(()),
            Err(err) => {
                let code = match err {
                    JournalError::OverBudget { .. } => ErrorCode::Quota,
                    JournalError::Io { .. } => ErrorCode::Io,
                };
                self.refused = Some(err.to_string());
                Err(code)
            }
        }
    }
}

impl FsJournal {
    /// The call ended with `result`: keep its changes, or — it failed —
    /// roll them back before the error goes anywhere, and say so in it.
    pub(crate) fn settle(self, result: Result<String, ToolFailure>) -> Result<String, ToolFailure> {
        let Some(call) = self.call else { return result };
        match result {
            Ok(out) => {
                call.keep();
                Ok(out)
            }
            Err(mut failure) => {
                if let Some(why) = &self.refused {
                    failure.message.push_str(&format!(" [host: a change was refused: {why}]"));
                }
                if call.is_empty() {
                    return Err(failure);
                }
                let changed = call.entries().len();
                let failed = call.roll_back();
                if failed.is_empty() {
                    tracing::info!(paths = changed, "failed call rolled back");
                    failure.message.push_str(&format!(
                        " [host: the call's changes to {changed} path(s) were rolled back; nothing it wrote is left]"
                    ));
                } else {
                    let list: Vec<String> =
                        failed.iter().map(|(p, why)| format!("{}: {why}", p.display())).collect();
                    tracing::warn!(paths = changed, failed = ?list, "failed call not fully rolled back");
                    failure.message.push_str(&format!(
                        " [host: rolling back the call's changes failed for {}]",
                        list.join("; ")
                    ));
                }
                Err(failure)
            }
        }
    }
}

/// `wasi:filesystem/types` with the journal: the view wasmtime-wasi's
/// implementation runs on, and the hook.
pub(crate) struct JournaledFs<'a> {
    inner: WasiFilesystemCtxView<'a>,
    hook: &'a mut FsJournal,
}

struct Journaled;

impl HasData for Journaled {
    type Data<'a> = JournaledFs<'a>;
}

/// Replace wasmtime-wasi's `wasi:filesystem/types` with the journaled one.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    types::add_to_linker::<StoreState, Journaled>(linker, |state: &mut StoreState| JournaledFs {
        inner: WasiFilesystemCtxView { ctx: state.wasi.filesystem(), table: &mut state.table },
        hook: &mut state.fs_journal,
    })?;
    linker.allow_shadowing(false);
    Ok(())
}

type Fd = Resource<types::Descriptor>;

impl JournaledFs<'_> {
    fn before(&mut self, fd: &Fd, path: &str, deep: bool) -> FsResult<()> {
        self.hook.before(fd.rep(), path, deep).map_err(FsError::from)
    }
}

impl types::Host for JournaledFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl HostDirectoryEntryStream for JournaledFs<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.inner.read_directory_entry(stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

impl HostDescriptor for JournaledFs<'_> {
    async fn advise(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Fd) -> FsResult<()> {
        self.inner.sync_data(fd).await
    }

    async fn get_flags(&mut self, fd: Fd) -> FsResult<types::DescriptorFlags> {
        self.inner.get_flags(fd).await
    }

    async fn get_type(&mut self, fd: Fd) -> FsResult<types::DescriptorType> {
        self.inner.get_type(fd).await
    }

    async fn set_size(&mut self, fd: Fd, size: types::Filesize) -> FsResult<()> {
        // A file descriptor that can write was journaled when it was opened.
        self.inner.set_size(fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Fd,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.inner.set_times(fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Fd,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Fd,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.inner.write(fd, buf, offset).await
    }

    async fn read_directory(&mut self, fd: Fd) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.inner.read_directory(fd).await
    }

    async fn sync(&mut self, fd: Fd) -> FsResult<()> {
        self.inner.sync(fd).await
    }

    async fn create_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.before(&fd, &path, false)?;
        self.inner.create_directory_at(fd, path).await
    }

    async fn stat(&mut self, fd: Fd) -> FsResult<types::DescriptorStat> {
        self.inner.stat(fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        self.inner.stat_at(fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.inner.set_times_at(fd, path_flags, path, atim, mtim).await
    }

    async fn link_at(
        &mut self,
        fd: Fd,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Fd,
        new_path: String,
    ) -> FsResult<()> {
        self.before(&new_descriptor, &new_path, false)?;
        self.inner.link_at(fd, old_path_flags, old_path, new_descriptor, new_path).await
    }

    async fn open_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Fd> {
        let changes = oflags.intersects(types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE)
            || flags.contains(types::DescriptorFlags::WRITE);
        if changes {
            self.before(&fd, &path, false)?;
        }
        let inside = self.hook.resolve(fd.rep(), &path).ok().flatten();
        let opened = self.inner.open_at(fd, path_flags, path, oflags, flags).await?;
        if let Some(place) = inside
            && matches!(self.inner.table.get(&opened), Ok(Descriptor::Dir(_)))
        {
            self.hook.dirs.insert(opened.rep(), place);
        }
        Ok(opened)
    }

    fn drop(&mut self, fd: Fd) -> wasmtime::Result<()> {
        self.hook.dirs.remove(&fd.rep());
        HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(&mut self, fd: Fd, path: String) -> FsResult<String> {
        self.inner.readlink_at(fd, path).await
    }

    async fn remove_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.before(&fd, &path, false)?;
        self.inner.remove_directory_at(fd, path).await
    }

    async fn rename_at(
        &mut self,
        fd: Fd,
        old_path: String,
        new_fd: Fd,
        new_path: String,
    ) -> FsResult<()> {
        // Both ends, whole trees: a folder moved away is put back entire.
        self.before(&fd, &old_path, true)?;
        self.before(&new_fd, &new_path, true)?;
        self.inner.rename_at(fd, old_path, new_fd, new_path).await
    }

    async fn symlink_at(&mut self, fd: Fd, src_path: String, dest_path: String) -> FsResult<()> {
        self.before(&fd, &dest_path, false)?;
        self.inner.symlink_at(fd, src_path, dest_path).await
    }

    async fn unlink_file_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.before(&fd, &path, false)?;
        self.inner.unlink_file_at(fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(&mut self, fd: Fd) -> FsResult<Resource<DynOutputStream>> {
        self.inner.append_via_stream(fd)
    }

    async fn is_same_object(&mut self, a: Fd, b: Fd) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b).await
    }

    async fn metadata_hash(&mut self, fd: Fd) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash(fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash_at(fd, path_flags, path).await
    }
}
