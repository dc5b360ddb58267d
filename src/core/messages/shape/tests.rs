use super::*;

#[test]
fn each_shape_reads_its_words_calls_and_results() {
    let gemini = r#"{"role":"model","parts":[{"text":"Let me look.","thoughtSignature":"AA=="},{"text":"hidden","thought":true},{"functionCall":{"id":"c1","name":"search","args":{"q":"x"}},"thoughtSignature":"BB=="}]}"#;
    let read = Shape::Gemini.read(gemini).unwrap();
    assert_eq!(read.role, Role::Model);
    assert_eq!(read.texts, vec!["Let me look."]);
    assert_eq!(read.calls[0].id.as_deref(), Some("c1"));
    assert_eq!(read.calls[0].args, r#"{"q":"x"}"#);

    let answer = r#"{"role":"user","parts":[{"functionResponse":{"name":"search","response":{"hits":[1,2]}}}]}"#;
    let read = Shape::Gemini.read(answer).unwrap();
    assert_eq!(
        (read.role, read.results[0].call_id.as_deref()),
        (Role::User, None)
    );
    assert_eq!(read.results[0].body, Some(r#"{"hits":[1,2]}"#));

    let openai = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"fetch","arguments":"{\"u\":1}"}}]}"#;
    let read = Shape::OpenAi.read(openai).unwrap();
    assert_eq!(
        (read.calls[0].name.as_ref(), read.calls[0].args),
        ("fetch", r#""{\"u\":1}""#)
    );
    let tool = r#"{"role":"tool","tool_call_id":"t1","content":[{"type":"text","text":"page"}]}"#;
    let read = Shape::OpenAi.read(tool).unwrap();
    assert_eq!(
        read.results[0].body,
        Some(r#"[{"type":"text","text":"page"}]"#)
    );
    assert!(
        read.texts.is_empty(),
        "a tool's content is a result, not the user's words"
    );
    assert_eq!(
        Shape::OpenAi
            .read(r#"{"role":"developer","content":"Be brief."}"#)
            .unwrap()
            .role,
        Role::System
    );

    let anthropic = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":"boom","is_error":true},{"type":"text","text":"Now skip region 7."}]}"#;
    let read = Shape::Anthropic.read(anthropic).unwrap();
    assert_eq!(read.texts, vec!["Now skip region 7."]);
    assert!(read.results[0].error);
    assert_eq!(read.results[0].body, Some(r#""boom""#));

    let ai = r#"{"role":"tool","content":[{"type":"tool-result","toolCallId":"a1","toolName":"run","output":{"type":"error-json","value":{"code":2}}}]}"#;
    let read = Shape::AiSdk.read(ai).unwrap();
    assert_eq!(
        (read.results[0].body, read.results[0].error),
        (Some(r#"{"code":2}"#), true)
    );
    assert_eq!(Shape::AiSdk.read("[1]"), None);
}
