//! The event port over an `EventTarget`: each event is a `CustomEvent` with its detail.

use wasm_bindgen::JsValue;

use super::convert::to_js;
use crate::core::ports::events::{CompactionEvent, EventSink};

/// Dispatches events on one `EventTarget` (the compactor's `events`).
#[derive(Debug, Clone)]
pub struct EventTargetSink {
    target: web_sys::EventTarget,
}

impl EventTargetSink {
    /// A sink over a new `EventTarget`; `None` where the host has no `EventTarget`.
    pub fn new() -> Option<Self> {
        web_sys::EventTarget::new()
            .ok()
            .map(|target| Self { target })
    }

    /// The target listeners subscribe to.
    pub fn target(&self) -> &web_sys::EventTarget {
        &self.target
    }
}

impl EventSink for EventTargetSink {
    fn emit(&self, event: &CompactionEvent) {
        let detail: JsValue = to_js(event).unwrap_or(JsValue::NULL);
        let init = web_sys::CustomEventInit::new();
        init.set_detail(&detail);
        if let Ok(custom) = web_sys::CustomEvent::new_with_event_init_dict(event.name(), &init) {
            // A listener that throws is reported by the browser and does not reach us.
            let _ = self.target.dispatch_event(&custom);
        }
    }
}
