//! The timer port, the boxed future every asynchronous port returns, and the two small future
//! combinators the engine needs (no async runtime in the core).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// A boxed future that need not be `Send` (the browser is single-threaded).
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Work (ms) after which a long job (a compaction, a search of every archive) lets the page run
/// before its next step: the browser counts a task of 50 ms or more as long (input waits,
/// frames drop), and no stage of a compaction of 733K tokens takes 35 ms
/// (`bench/big-entries.mjs`); a break costs a message hop, so a job of a few milliseconds takes
/// none.
pub const SLICE_MS: f64 = 10.0;

/// Waiting without blocking (`setTimeout` in the browser).
pub trait Timer {
    /// A future that completes after `ms` milliseconds.
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()>;
}

/// Runs `work` until it completes or `deadline` does; `None` when the deadline came first.
pub async fn race_deadline<T>(
    work: impl Future<Output = T>,
    deadline: impl Future<Output = ()>,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut deadline = std::pin::pin!(deadline);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

#[cfg(any(test, feature = "testing"))]
/// Drives a future whose every step is ready at once (scripted providers, instant timers) to
/// completion; `None` if it would wait for something. For native tests and tools.
pub fn run_ready<T>(future: impl Future<Output = T>) -> Option<T> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for _ in 0..10_000 {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_wins_over_a_future_that_never_completes() {
        let result = run_ready(race_deadline(std::future::pending::<u8>(), async {}));
        assert_eq!(result, Some(None));
        let result = run_ready(race_deadline(async { 7 }, std::future::pending::<()>()));
        assert_eq!(result, Some(Some(7)));
    }
}
