//! The `gemini` provider: `generateContent` over `fetch`, the key in the `x-goog-api-key`
//! header only; a call the engine drops (time-out, cancel) aborts its request.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::abort_on_drop::AbortOnDrop;
use super::js_error::thrown_message;
use super::js_error::ContextCompactorError;
use crate::core::error::{ProviderError, ProviderFailure};
use crate::core::ports::timer::LocalBoxFuture;
use crate::core::providers::gemini::{
    endpoint, read_reply, request_body, scrub, Family, DEFAULT_BASE_URL, DEFAULT_MODEL,
};
use crate::core::providers::port::{Generation, SummaryProvider, SummaryRequest};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &web_sys::Request) -> js_sys::Promise;
}

/// Calls Gemini from the browser. The key lives in this struct only: never in storage, a URL,
/// an event, an error message or the console.
pub struct GeminiProvider {
    api_key: String,
    model: String,
    base_url: String,
}

impl std::fmt::Debug for GeminiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiProvider")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

fn field(object: &JsValue, name: &str) -> Option<String> {
    js_sys::Reflect::get(object, &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.as_string())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// The provider described by `{ type: "gemini", apiKey, model?, baseUrl? }`.
pub fn provider_from(options: &JsValue) -> Result<Box<dyn SummaryProvider>, JsValue> {
    let api_key = field(options, "apiKey").ok_or_else(|| {
        ContextCompactorError::invalid_input(
            "CompactorOptions.provider.apiKey",
            "the gemini provider needs an API key",
        )
    })?;
    Ok(Box::new(GeminiProvider {
        api_key,
        model: field(options, "model").unwrap_or_else(|| DEFAULT_MODEL.into()),
        base_url: field(options, "baseUrl").unwrap_or_else(|| DEFAULT_BASE_URL.into()),
    }))
}

fn js_failure(err: JsValue) -> ProviderError {
    ProviderError::Network(thrown_message(&err))
}

impl GeminiProvider {
    fn request(
        &self,
        prompt: &str,
        request: &SummaryRequest<'_>,
    ) -> Result<(web_sys::Request, AbortOnDrop), ProviderError> {
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        init.set_body(&JsValue::from_str(
            &request_body(prompt, request.settings).to_string(),
        ));
        let headers = web_sys::Headers::new().map_err(js_failure)?;
        headers
            .set("Content-Type", "application/json")
            .map_err(js_failure)?;
        headers
            .set("x-goog-api-key", &self.api_key)
            .map_err(js_failure)?;
        init.set_headers(&headers);
        let abort = AbortOnDrop::fresh();
        init.set_signal(abort.signal().as_ref());
        let url = endpoint(&self.base_url, &self.model);
        let request = web_sys::Request::new_with_str_and_init(&url, &init).map_err(js_failure)?;
        Ok((request, abort))
    }
}

impl SummaryProvider for GeminiProvider {
    fn model(&self) -> String {
        self.model.clone()
    }

    fn input_limit(&self) -> Option<usize> {
        Family::of(&self.model).input_limit()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let prepared = self.request(request.prompt, request);
        let timeout_ms = request.settings.timeout_ms;
        let model = self.model.clone();
        let secret = self.api_key.clone();
        Box::pin(async move {
            let call = async {
                let (http_request, _abort) = prepared?;
                let response =
                    JsFuture::from(global_fetch(&http_request))
                        .await
                        .map_err(|err| {
                            let name = js_sys::Reflect::get(&err, &"name".into())
                                .ok()
                                .and_then(|n| n.as_string());
                            if name.as_deref() == Some("AbortError") {
                                ProviderError::Timeout {
                                    after_ms: timeout_ms,
                                }
                            } else {
                                js_failure(err)
                            }
                        })?;
                let response: web_sys::Response = response.dyn_into().map_err(|_| {
                    ProviderError::Network("fetch did not return a Response".into())
                })?;
                let status = response.status();
                let text = JsFuture::from(response.text().map_err(js_failure)?)
                    .await
                    .map_err(js_failure)?
                    .as_string()
                    .unwrap_or_default();
                let reply = read_reply(status, &text, &model, &secret)?;
                Ok::<_, ProviderFailure>(Generation {
                    text: reply.text,
                    usage: reply.usage,
                    model: reply.model_version,
                    cut: reply.cut,
                })
            };
            call.await.map_err(|failure| scrub(failure, &secret))
        })
    }
}
