//! What one page knows of the compactions over one [`LogStore`](super::log_store::LogStore):
//! whether one of them runs here and whether it holds the logs frozen. Every `Compactor` and
//! `Archives` over the same logs consults this one value (the `LogStore` holds it), so a
//! second object in the page cannot delete or roll back what a running compaction still needs.

use std::cell::Cell;
use std::rc::Rc;

thread_local! {
    /// How many compactions, rollbacks and archive reads the app asked for run in this page,
    /// over any logs.
    static BUSY_IN_PAGE: Cell<usize> = const { Cell::new(0) };
}

/// Whether this page runs a compaction or rollback, or reads archives for the app, over any
/// logs: work that waits for the page to be idle (reading the kept archives' digests) waits for
/// every one of them.
pub fn busy_in_page() -> bool {
    BUSY_IN_PAGE.with(|busy| busy.get() > 0)
}

/// A compaction, rollback or archive read of this page, counted by [`busy_in_page`] while it
/// is held.
#[derive(Debug)]
pub struct PageBusy(());

impl PageBusy {
    /// Counts one more piece of work in the page until dropped.
    pub fn mark() -> Self {
        BUSY_IN_PAGE.with(|busy| busy.set(busy.get() + 1));
        Self(())
    }
}

impl Drop for PageBusy {
    fn drop(&mut self) {
        BUSY_IN_PAGE.with(|busy| busy.set(busy.get() - 1));
    }
}

/// The compaction state of one page over one `LogStore`.
#[derive(Debug, Default)]
pub struct PageState {
    compacting: Cell<bool>,
    frozen: Cell<bool>,
}

impl PageState {
    /// Whether a compaction or rollback over these logs runs in this page.
    pub fn compacting(&self) -> bool {
        self.compacting.get()
    }

    /// Whether a compaction of this page holds the logs frozen.
    pub fn frozen(&self) -> bool {
        self.frozen.get()
    }

    /// Marks the logs frozen (or not) by the running compaction.
    pub fn set_frozen(&self, frozen: bool) {
        self.frozen.set(frozen);
    }

    /// Claims the page for one compaction or rollback; `None` while another runs here.
    pub fn claim(self: &Rc<Self>) -> Option<PageClaim> {
        if self.compacting.replace(true) {
            return None;
        }
        Some(PageClaim {
            page: Rc::clone(self),
            _busy: PageBusy::mark(),
        })
    }
}

/// The page's claim of one compaction or rollback: held from the call until it ends (or its
/// future is dropped), then given back with the logs unfrozen.
#[derive(Debug)]
pub struct PageClaim {
    page: Rc<PageState>,
    _busy: PageBusy,
}

impl Drop for PageClaim {
    fn drop(&mut self) {
        self.page.frozen.set(false);
        self.page.compacting.set(false);
    }
}
