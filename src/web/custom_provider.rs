//! The `custom` provider: the app's own `generate(prompt, settings)` function.

use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::abort_on_drop::AbortOnDrop;
use super::convert::to_js;
use super::js_error::thrown_message;
use super::lone_surrogates;
use crate::core::error::{ProviderError, ProviderFailure, ThrownSays};
use crate::core::model::call_options::SIGNAL_OPTION;
use crate::core::ports::timer::LocalBoxFuture;
use crate::core::providers::port::{Generation, SummaryProvider, SummaryRequest};
use js_sys::JsString;
use wasm_bindgen::JsCast;

/// Calls `provider.generate(prompt, settings)` and awaits the text it resolves to.
pub struct CustomProvider {
    this: JsValue,
    generate: js_sys::Function,
    model: String,
}

impl CustomProvider {
    /// A provider over the object `{ type: "custom", generate, model? }`.
    pub fn new(this: JsValue, generate: js_sys::Function, model: Option<String>) -> Self {
        Self {
            this,
            generate,
            model: model.unwrap_or_else(|| "custom".into()),
        }
    }
}

impl SummaryProvider for CustomProvider {
    fn model(&self) -> String {
        self.model.clone()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let settings: JsValue = match to_js::<_, JsValue>(request.settings) {
            Ok(value) => value,
            Err(err) => {
                let message = err.message().to_owned();
                return Box::pin(async move { Err(ProviderError::Failed(message).into()) });
            }
        };
        let abort = AbortOnDrop::fresh();
        if let Some(signal) = abort.signal() {
            // `settings` is a fresh plain object: setting a property on it cannot fail.
            let _ = js_sys::Reflect::set(&settings, &SIGNAL_OPTION.into(), &signal);
        }
        let call = self.generate.call2(
            &self.this,
            &lone_surrogates::to_js(request.prompt),
            &settings,
        );
        Box::pin(async move {
            let _abort = abort;
            let returned = call.map_err(|err| thrown_failure(&err))?;
            let value = JsFuture::from(js_sys::Promise::resolve(&returned))
                .await
                .map_err(|err| thrown_failure(&err))?;
            let text = value.dyn_ref::<JsString>().map(lone_surrogates::from_js);
            let text = text.ok_or_else(|| {
                let what = match value.js_typeof().as_string() {
                    Some(kind) if value.is_null() => format!("null ({kind})"),
                    Some(kind) => format!("a value of type {kind}"),
                    None => "a value that is not text".to_owned(),
                };
                ProviderError::NotText(what)
            })?;
            Ok(Generation::from(text))
        })
    }
}

/// The failure `thrown` stands for, as its own `status`, `retryable` and `retryAfterMs` say.
fn thrown_failure(thrown: &JsValue) -> ProviderError {
    let property = |name: &str| {
        if thrown.is_object() {
            js_sys::Reflect::get(thrown, &name.into()).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        }
    };
    let says = ThrownSays {
        status: property("status").as_f64(),
        retryable: property("retryable").as_bool(),
        retry_after_ms: property("retryAfterMs").as_f64(),
    };
    ProviderError::thrown(thrown_message(thrown), says)
}
