//! The clock port over `Date.now()`.

use crate::core::ports::clock::Clock;

/// Reads the browser's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserClock;

impl Clock for BrowserClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}
