//! A provider call the engine drops (it timed out, or the compaction was cancelled) aborts
//! what it started, so the browser stops the request too.

/// Aborts its controller when dropped.
pub struct AbortOnDrop(pub Option<web_sys::AbortController>);

impl AbortOnDrop {
    /// A fresh controller, aborted on drop (none where the host has no `AbortController`).
    pub fn fresh() -> Self {
        Self(web_sys::AbortController::new().ok())
    }

    /// The signal to hand to the work, if there is a controller.
    pub fn signal(&self) -> Option<web_sys::AbortSignal> {
        self.0.as_ref().map(web_sys::AbortController::signal)
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = &self.0 {
            controller.abort();
        }
    }
}
