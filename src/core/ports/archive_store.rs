//! The port to where archives live. localStorage (the logs' own store) answers at once;
//! IndexedDB answers asynchronously, so the browser layer keeps a copy of it in memory that the
//! core reads and writes synchronously, and the core brings that copy up to date (`refresh`)
//! and makes its writes durable (`commit`) at the moments the journal needs them. The copy
//! holds every key but only the values an operation fetched (`fetch`, `release`): a page's
//! memory follows what it reads, not how many archives the session wrote.

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
///
/// Its `get` answers only for values this copy holds: for a key it lists but has not fetched,
/// `get` fails and the key is noted, for [`take_unfetched`](ArchiveStore::take_unfetched) to
/// report and [`fetch`](ArchiveStore::fetch) to bring.
pub trait ArchiveStore: KeyValueStore {
    /// Brings this copy up to date with what any tab committed. Called after every acquisition
    /// of the store lock and before every read of the archive API.
    fn refresh(&self) -> LocalBoxFuture<'static, Result<(), StorageError>>;
    /// Makes every write since the last commit durable, all or none. On a failure none of them
    /// is stored and this copy is as it was at the last commit.
    fn commit(&self) -> LocalBoxFuture<'static, Result<(), StorageError>>;
    /// The value of `key` as committed, read from the store itself rather than this copy; an
    /// empty text when the stored value gives none (its compression damaged), which reads as
    /// no archive.
    fn read_committed(
        &self,
        key: &str,
    ) -> LocalBoxFuture<'static, Result<Option<String>, StorageError>>;
    /// Brings the values of `keys` into this copy, where they stay until
    /// [`release`](ArchiveStore::release); a key the store no longer holds leaves the copy.
    fn fetch(&self, keys: Vec<String>) -> LocalBoxFuture<'static, Result<(), StorageError>>;
    /// Lets go of every value this copy holds but those of `keep` and the writes not yet
    /// committed; their keys stay listed.
    fn release(&self, keep: &[String]);
    /// The keys whose values a `get` asked for since the last call and this copy did not hold.
    fn take_unfetched(&self) -> Vec<String>;
    /// What the browser says of the origin's storage, which this store shares; `None` where
    /// it says nothing.
    fn estimate(&self) -> LocalBoxFuture<'static, Option<StorageEstimate>> {
        ready(None)
    }
}

/// The origin's storage as the browser reports it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StorageEstimate {
    /// Bytes in use.
    pub usage: f64,
    /// Bytes the origin may use.
    pub quota: f64,
}

/// The share of the quota in use from which the package acts: purges what has expired and
/// tells the app (`storage_pressure`), and writes no summary cache.
pub const PRESSURE_SHARE: f64 = 0.8;

impl StorageEstimate {
    /// The share of the quota in use (0 when the quota is unknown).
    pub fn share(&self) -> f64 {
        match self.quota > 0.0 {
            true => self.usage / self.quota,
            false => 0.0,
        }
    }
}

/// What `get` answers for a key whose value the copy lists and has not fetched.
pub fn unfetched(key: &str) -> StorageError {
    StorageError::Unavailable {
        reason: format!("the archive \"{key}\" was not read from the archive store yet"),
    }
}

/// A future that is ready with `value`.
pub fn ready<T: 'static>(value: T) -> LocalBoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

#[cfg(any(test, feature = "testing"))]
/// An archive store in memory with the semantics of the IndexedDB one: a committed state
/// shared by every clone (the tabs), a copy per clone that lists every key and holds only the
/// values fetched or written, writes that become visible to other clones only on `commit`,
/// and commits that can be made to fail.
#[derive(Debug, Clone, Default)]
pub struct MemoryArchiveStore {
    committed: MemoryStore,
    copy: Rc<RefCell<CopyEntries>>,
    pending: Rc<RefCell<Vec<String>>>,
    unfetched: Rc<RefCell<Vec<String>>>,
    failure: Rc<RefCell<Option<FailureCheck>>>,
    commits: Rc<RefCell<usize>>,
    fetched: Rc<RefCell<Vec<String>>>,
    estimate: Rc<RefCell<Option<StorageEstimate>>>,
}

/// Every key of a copy, with its value once fetched or written.
// A test double, never in the package: the standard map is fine here.
#[cfg(any(test, feature = "testing"))]
#[allow(clippy::disallowed_types)]
type CopyEntries = std::collections::BTreeMap<String, Option<String>>;

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
            estimate: Rc::clone(&self.estimate),
            ..Self::default()
        }
    }

    /// Every later commit and read-back first asks `check`; the error it returns fails that
    /// call, and a failed commit drops the writes it carried, as a failed transaction does.
    pub fn fail_when(&self, check: impl Fn() -> Result<(), StorageError> + 'static) {
        *self.failure.borrow_mut() = Some(FailureCheck(Rc::new(check)));
    }

    /// What later estimates of the origin's storage answer (shared by every tab's clone).
    pub fn set_estimate(&self, estimate: Option<StorageEstimate>) {
        *self.estimate.borrow_mut() = estimate;
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

    /// How many values this copy holds now (fetched, or written and not let go of).
    pub fn values_held(&self) -> usize {
        self.copy.borrow().values().filter(|v| v.is_some()).count()
    }

    /// How many values were fetched from the committed state in all.
    pub fn values_fetched(&self) -> usize {
        self.fetched.borrow().len()
    }

    /// The keys whose values were fetched from the committed state, each once.
    pub fn keys_fetched(&self) -> Vec<String> {
        let mut keys = self.fetched.borrow().clone();
        crate::core::order::sort::sort_by(&mut keys, |a, b| a.cmp(b));
        keys.dedup();
        keys
    }

    fn reload(&self) -> Result<(), StorageError> {
        let keys = self.committed.keys()?;
        *self.copy.borrow_mut() = keys.into_iter().map(|key| (key, None)).collect();
        self.pending.borrow_mut().clear();
        Ok(())
    }
}

#[cfg(any(test, feature = "testing"))]
impl KeyValueStore for MemoryArchiveStore {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        match self.copy.borrow().get(key) {
            None => Ok(None),
            Some(Some(value)) => Ok(Some(value.clone())),
            Some(None) => {
                self.unfetched.borrow_mut().push(key.to_owned());
                Err(unfetched(key))
            }
        }
    }
    fn contains(&self, key: &str) -> Result<bool, StorageError> {
        Ok(self.copy.borrow().contains_key(key))
    }
    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        self.pending.borrow_mut().push(key.to_owned());
        let mut copy = self.copy.borrow_mut();
        copy.insert(key.to_owned(), Some(value.to_owned()));
        Ok(())
    }
    fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.pending.borrow_mut().push(key.to_owned());
        self.copy.borrow_mut().remove(key);
        Ok(())
    }
    fn keys(&self) -> Result<Vec<String>, StorageError> {
        Ok(self.copy.borrow().keys().cloned().collect())
    }
}

#[cfg(any(test, feature = "testing"))]
impl ArchiveStore for MemoryArchiveStore {
    fn refresh(&self) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        // Writes not yet committed stay in the copy, as in the browser's. Values are let go
        // of at every refresh (the browser's copy keeps them while nothing changed): what a
        // read forgot to fetch shows here.
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
                let copy = self.copy.borrow();
                let written = keys.iter().try_for_each(|key| match copy.get(key) {
                    Some(Some(value)) => self.committed.set(key, value),
                    Some(None) => Ok(()),
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

    fn fetch(&self, keys: Vec<String>) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        let mut copy = self.copy.borrow_mut();
        for key in keys {
            if !matches!(copy.get(&key), Some(None)) {
                continue;
            }
            match self.committed.get(&key) {
                Ok(Some(value)) => {
                    self.fetched.borrow_mut().push(key.clone());
                    copy.insert(key, Some(value));
                }
                Ok(None) => {
                    copy.remove(&key);
                }
                Err(err) => return ready(Err(err)),
            }
        }
        ready(Ok(()))
    }

    fn release(&self, keep: &[String]) {
        let pending = self.pending.borrow();
        for (key, value) in self.copy.borrow_mut().iter_mut() {
            if !keep.contains(key) && !pending.contains(key) {
                *value = None;
            }
        }
    }

    fn take_unfetched(&self) -> Vec<String> {
        std::mem::take(&mut *self.unfetched.borrow_mut())
    }

    fn estimate(&self) -> LocalBoxFuture<'static, Option<StorageEstimate>> {
        ready(*self.estimate.borrow())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ports::timer::run_ready;

    fn now<T>(future: LocalBoxFuture<'static, T>) -> T {
        run_ready(future).expect("the double answers at once")
    }

    #[test]
    fn a_copy_lists_every_key_and_holds_only_the_values_fetched() {
        let tab = MemoryArchiveStore::new();
        tab.set("a", "1").unwrap();
        tab.set("b", "2").unwrap();
        now(tab.commit()).unwrap();
        let other = tab.other_tab();
        now(other.refresh()).unwrap();
        assert_eq!(other.keys().unwrap(), ["a", "b"]);
        assert!(other.contains("a").unwrap());
        assert!(other.get("a").is_err(), "not fetched yet");
        assert_eq!(other.get("c").unwrap(), None);
        assert_eq!(other.take_unfetched(), ["a"]);
        assert!(other.take_unfetched().is_empty());
        now(other.fetch(vec!["a".into()])).unwrap();
        assert_eq!(other.get("a").unwrap().as_deref(), Some("1"));
        // Removed by the first tab since the second listed it: a fetch drops the key.
        tab.remove("b").unwrap();
        now(tab.commit()).unwrap();
        now(other.fetch(vec!["b".into()])).unwrap();
        assert_eq!(other.keys().unwrap(), ["a"]);
        // Let go of, but a write not committed stays, and so does what is kept.
        other.set("c", "3").unwrap();
        now(other.fetch(vec!["a".into()])).unwrap();
        other.release(&[]);
        assert!(other.get("a").is_err());
        assert_eq!(other.get("c").unwrap().as_deref(), Some("3"));
        now(other.fetch(vec!["a".into()])).unwrap();
        other.release(&["a".into()]);
        assert_eq!(other.get("a").unwrap().as_deref(), Some("1"));
        assert_eq!((other.values_held(), other.values_fetched()), (2, 2));
    }
}
