//! The clock port, and ISO-8601 formatting of its readings.

#[cfg(any(test, feature = "testing"))]
use std::cell::Cell;
use std::rc::Rc;

/// Wall-clock time in milliseconds since the Unix epoch (what `Date.now()` returns).
pub trait Clock {
    /// The current time.
    fn now_ms(&self) -> f64;
}

impl<T: Clock + ?Sized> Clock for Rc<T> {
    fn now_ms(&self) -> f64 {
        (**self).now_ms()
    }
}

#[cfg(any(test, feature = "testing"))]
/// A clock that only moves when told to (or, made [`ManualClock::ticking`], a little at every
/// reading); clones share the same time. For tests and replays.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Rc<Cell<f64>>,
    tick_ms: f64,
}

#[cfg(any(test, feature = "testing"))]
impl ManualClock {
    /// A clock standing at `start_ms`.
    pub fn new(start_ms: f64) -> Self {
        Self {
            now: Rc::new(Cell::new(start_ms)),
            tick_ms: 0.0,
        }
    }

    /// A clock standing at `start_ms` that moves `tick_ms` after every reading: work that
    /// reads the time takes time.
    pub fn ticking(start_ms: f64, tick_ms: f64) -> Self {
        Self {
            now: Rc::new(Cell::new(start_ms)),
            tick_ms,
        }
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
    }
}

#[cfg(any(test, feature = "testing"))]
impl Clock for ManualClock {
    fn now_ms(&self) -> f64 {
        let now = self.now.get();
        self.now.set(now + self.tick_ms);
        now
    }
}

/// Formats epoch milliseconds as `Date.prototype.toISOString()` does: `2026-11-22T18:56:07.123Z`.
pub(crate) fn iso_timestamp(epoch_ms: f64) -> String {
    let total_ms = if epoch_ms.is_finite() {
        epoch_ms.floor() as i64
    } else {
        0
    };
    let days = total_ms.div_euclid(86_400_000);
    let ms_of_day = total_ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_to_iso_string() {
        assert_eq!(iso_timestamp(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_timestamp(1_795_373_767_123.0),
            "2026-11-22T18:56:07.123Z"
        );
        assert_eq!(iso_timestamp(951_782_400_000.0), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_timestamp(-1.0), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn manual_clock_advances_for_all_clones() {
        let clock = ManualClock::new(10.0);
        let other = clock.clone();
        clock.advance(5.0);
        assert_eq!(other.now_ms(), 15.0);
    }
}
