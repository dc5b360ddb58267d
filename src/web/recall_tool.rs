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
    declaration, declaration_json_schema, sdk_tool, SdkTool, DEFAULT_RECALL_TOKENS,
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

    /// The tool's arguments as JSON Schema (`declarationJsonSchema.parameters`).
    #[wasm_bindgen(getter, unchecked_return_type = "RecallToolParameters")]
    pub fn parameters(&self) -> Result<JsValue, JsValue> {
        self.tool(SdkTool::Parameters)
    }

    /// OpenAI's tool, for `tools` of Chat Completions: `{ type: "function", function }`.
    #[wasm_bindgen(getter, js_name = openaiTool, unchecked_return_type = "RecallToolOpenAi")]
    pub fn openai_tool(&self) -> Result<JsValue, JsValue> {
        self.tool(SdkTool::OpenAi)
    }

    /// Anthropic's tool, for `tools` of the Messages API: `{ name, description, input_schema }`.
    #[wasm_bindgen(getter, js_name = anthropicTool, unchecked_return_type = "RecallToolAnthropic")]
    pub fn anthropic_tool(&self) -> Result<JsValue, JsValue> {
        self.tool(SdkTool::Anthropic)
    }

    /// The AI SDK's `tool()` options: `{ description, inputSchema, execute }` (`execute` is
    /// `call`); wrap `inputSchema` with the SDK's `jsonSchema()`.
    #[wasm_bindgen(getter, js_name = aiSdkTool, unchecked_return_type = "RecallToolAiSdk")]
    pub fn ai_sdk_tool(&self) -> Result<JsValue, JsValue> {
        let tool = self.tool(SdkTool::AiSdk)?;
        let (shelf, max_tokens) = (Rc::clone(&self.shelf), self.max_tokens);
        let execute = Closure::<dyn Fn(JsValue) -> js_sys::Promise>::new(move |args| {
            archive_call(&shelf, ArchiveCall::RecallText(args, max_tokens))
        });
        js_sys::Reflect::set(&tool, &"execute".into(), &execute.into_js_value())?;
        Ok(tool)
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

    /// The tool as `sdk` takes it, as a JS object.
    fn tool(&self, sdk: SdkTool) -> Result<JsValue, JsValue> {
        Ok(json_to_js(&sdk_tool(self.unit(), sdk))?)
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
