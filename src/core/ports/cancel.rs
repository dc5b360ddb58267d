//! Cancellation of one compaction: the app's `AbortSignal` or `compactor.abort()` trips it, and
//! every wait of the compaction (the provider, the retry delay, a running iteration) ends.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    cancelled: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

/// A cancellation token; clones share it.
#[derive(Clone, Default)]
pub struct Cancel(Rc<State>);

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Cancel").field(&self.is_cancelled()).finish()
    }
}

impl Cancel {
    /// Trips the token and wakes everything waiting on it.
    pub fn cancel(&self) {
        self.0.cancelled.set(true);
        for waker in self.0.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    /// Whether the token was tripped.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    /// A future that completes when the token is tripped.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled(self.clone())
    }
}

/// Completes once its [`Cancel`] is tripped.
pub struct Cancelled(Cancel);

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_cancelled() {
            return Poll::Ready(());
        }
        self.0 .0.wakers.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ports::timer::{race_deadline, run_ready};

    #[test]
    fn a_tripped_token_ends_the_race_and_an_untripped_one_never_does() {
        let cancel = Cancel::default();
        let raced = run_ready(race_deadline(
            std::future::pending::<u8>(),
            cancel.cancelled(),
        ));
        assert_eq!(raced, None, "still pending");
        cancel.cancel();
        let raced = run_ready(race_deadline(
            std::future::pending::<u8>(),
            cancel.cancelled(),
        ));
        assert_eq!(raced, Some(None));
        let done = run_ready(race_deadline(async { 3 }, Cancel::default().cancelled()));
        assert_eq!(done, Some(Some(3)));
    }
}
