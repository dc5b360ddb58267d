//! `RecallTool` for JavaScript: the recall tool of a `Compactor` or `Archives` for the app's
//! model — its Gemini function declaration and `call(args)`, which answers with the archived
//! originals as text (`store::recall_tool`).

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::convert::{json_to_js, option_in, optional_options};
use super::shelves::{archive_call, ArchiveCall, BrowserShelf};
use super::typescript::RecallToolOptionsJs;
use crate::core::log::iteration::Unit;
use crate::core::model::call_options::{RecallToolOptions, FROM_ONE};
use crate::core::store::recall_tool::{
    declaration, declaration_json_schema, DEFAULT_RECALL_TOKENS,
};

/// Recall as a tool the app's model calls: put `declaration` in a Gemini request's
/// `tools: [{ functionDeclarations: [declaration] }]`, and answer each `functionCall` of that
/// name with `await tool.call(functionCall.args)`.
#[wasm_bindgen(js_name = RecallTool)]
pub struct JsRecallTool {
    shelf: Rc<BrowserShelf>,
    max_tokens: usize,
}

#[wasm_bindgen(js_class = RecallTool)]
impl JsRecallTool {
    /// The Gemini `FunctionDeclaration` of the tool (`recall_archived_iterations`).
    #[wasm_bindgen(getter, unchecked_return_type = "RecallToolDeclaration")]
    pub fn declaration(&self) -> Result<JsValue, JsValue> {
        Ok(json_to_js(&declaration(self.unit()))?)
    }

    /// The same declaration with its parameters in JSON Schema (`object`, `integer`, `string`):
    /// OpenAI's `function` (`parameters`), Anthropic's tool (`input_schema`: its `parameters`),
    /// the AI SDK's `jsonSchema(parameters)`.
    #[wasm_bindgen(getter, js_name = declarationJsonSchema, unchecked_return_type = "RecallToolJsonSchemaDeclaration")]
    pub fn declaration_json_schema(&self) -> Result<JsValue, JsValue> {
        Ok(json_to_js(&declaration_json_schema(self.unit()))?)
    }

    /// The answer to the model's arguments `{ from?, to?, query?, part? }`: the archived originals
    /// as text, at most about `maxTokens` tokens, ending with how to call again for the rest.
    /// A bad range, an archive that is gone or arguments of the wrong shape are answered with
    /// a sentence, never a rejection; a storage failure rejects.
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn call(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RecallToolArgs")] args: JsValue,
    ) -> js_sys::Promise {
        archive_call(&self.shelf, ArchiveCall::RecallText(args, self.max_tokens))
    }
}

impl JsRecallTool {
    /// What the tool's texts call an iteration of its logs (a message list's turn).
    fn unit(&self) -> Unit {
        self.shelf.logs().borrow().unit()
    }
}

/// The recall tool over the archives on `shelf` with `options` (`{ maxTokens? }`, a whole number
/// from 1; any other key is refused); `what` names the method in an error.
pub(super) fn recall_tool(
    shelf: &Rc<BrowserShelf>,
    options: Option<RecallToolOptionsJs>,
    what: &str,
) -> Result<JsRecallTool, JsValue> {
    let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
    let options: RecallToolOptions = optional_options(options, what)?;
    let max_tokens = option_in(options.max_tokens, "maxTokens", FROM_ONE, what)?
        .unwrap_or(DEFAULT_RECALL_TOKENS);
    Ok(JsRecallTool {
        shelf: Rc::clone(shelf),
        max_tokens,
    })
}
