//! The port to where archives live. localStorage (the logs' own store) answers at once;
//! IndexedDB answers asynchronously, so the browser layer keeps a copy of it in memory that the
//! core reads and writes synchronously, and the core brings that copy up to date (`refresh`)
//! and makes its writes durable (`commit`) at the moments the journal needs them.

#[cfg(any(test, feature = "testing"))]
use std::cell::RefCell;
#[cfg(any(test, feature = "testing"))]
use std::rc::Rc;

use crate::core::error::StorageError;
use crate::core::ports::storage::KeyValueStore;
#[cfg(any(test, feature = "testing"))]
use crate::core::ports::storage::MemoryStore;
use crate::core::ports::timer::LocalBoxFuture;

/// A store of archives other than the logs' own: read and written like a [`KeyValueStore`]
/// between a [`refresh`](ArchiveStore::refresh) and a [`commit`](ArchiveStore::commit).
pub trait ArchiveStore: KeyValueStore {
    /// Brings this copy up to date with what any tab committed. Called after every acquisition
    /// of the store lock and before every read of the archive API.
    fn refresh(&self) -> LocalBoxFuture<'static, Result<(), StorageError>>;
    /// Makes every write since the last commit durable, all or none. On a failure none of them
    /// is stored and this copy is as it was at the last commit.
    fn commit(&self) -> LocalBoxFuture<'static, Result<(), StorageError>>;
    /// The value of `key` as committed, read from the store itself rather than this copy.
    fn read_committed(
        &self,
        key: &str,
    ) -> LocalBoxFuture<'static, Result<Option<String>, StorageError>>;
}

/// A future that is ready with `value`.
pub fn ready<T: 'static>(value: T) -> LocalBoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

#[cfg(any(test, feature = "testing"))]
/// An archive store in memory with the semantics of the IndexedDB one: a committed state
/// shared by every clone (the tabs), a copy per clone, writes that become visible to other
/// clones only on `commit`, and commits that can be made to fail.
#[derive(Debug, Clone, Default)]
pub struct MemoryArchiveStore {
    committed: MemoryStore,
    copy: MemoryStore,
    pending: Rc<RefCell<Vec<String>>>,
    failure: Rc<RefCell<Option<FailureCheck>>>,
    commits: Rc<RefCell<usize>>,
}

/// The test's rule for which calls fail.
#[cfg(any(test, feature = "testing"))]
#[derive(Clone)]
struct FailureCheck(Rc<dyn Fn() -> Result<(), StorageError>>);

#[cfg(any(test, feature = "testing"))]
impl std::fmt::Debug for FailureCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FailureCheck")
    }
}

#[cfg(any(test, feature = "testing"))]
impl MemoryArchiveStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Another tab's view of the same committed archives, with a copy of its own.
    pub fn other_tab(&self) -> Self {
        Self {
            committed: self.committed.clone(),
            ..Self::default()
        }
    }

    /// Every later commit and read-back first asks `check`; the error it returns fails that
    /// call, and a failed commit drops the writes it carried, as a failed transaction does.
    pub fn fail_when(&self, check: impl Fn() -> Result<(), StorageError> + 'static) {
        *self.failure.borrow_mut() = Some(FailureCheck(Rc::new(check)));
    }

    /// Every later commit and read-back fails with `err`.
    pub fn fail_commits(&self, err: StorageError) {
        self.fail_when(move || Err(err.clone()));
    }

    fn check(&self) -> Result<(), StorageError> {
        let check = self.failure.borrow().clone();
        check.map_or(Ok(()), |check| (check.0)())
    }

    /// The committed state, as the store itself holds it.
    pub fn committed(&self) -> &MemoryStore {
        &self.committed
    }

    /// How many commits succeeded.
    pub fn commits(&self) -> usize {
        *self.commits.borrow()
    }

    fn reload(&self) -> Result<(), StorageError> {
        for key in self.copy.keys()? {
            self.copy.remove(&key)?;
        }
        for key in self.committed.keys()? {
            if let Some(value) = self.committed.get(&key)? {
                self.copy.set(&key, &value)?;
            }
        }
        self.pending.borrow_mut().clear();
        Ok(())
    }
}

#[cfg(any(test, feature = "testing"))]
impl KeyValueStore for MemoryArchiveStore {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        self.copy.get(key)
    }
    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        self.pending.borrow_mut().push(key.to_owned());
        self.copy.set(key, value)
    }
    fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.pending.borrow_mut().push(key.to_owned());
        self.copy.remove(key)
    }
    fn keys(&self) -> Result<Vec<String>, StorageError> {
        self.copy.keys()
    }
}

#[cfg(any(test, feature = "testing"))]
impl ArchiveStore for MemoryArchiveStore {
    fn refresh(&self) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        // Writes not yet committed stay in the copy, as in the browser's.
        let outcome = if self.pending.borrow().is_empty() {
            self.reload()
        } else {
            Ok(())
        };
        ready(outcome)
    }

    fn commit(&self) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        let outcome = match self.check() {
            Err(err) => self.reload().and(Err(err)),
            Ok(()) => {
                let keys = std::mem::take(&mut *self.pending.borrow_mut());
                let written = keys.iter().try_for_each(|key| match self.copy.get(key)? {
                    Some(value) => self.committed.set(key, &value),
                    None => self.committed.remove(key),
                });
                *self.commits.borrow_mut() += 1;
                written
            }
        };
        ready(outcome)
    }

    fn read_committed(
        &self,
        key: &str,
    ) -> LocalBoxFuture<'static, Result<Option<String>, StorageError>> {
        ready(self.check().and_then(|()| self.committed.get(key)))
    }
}
