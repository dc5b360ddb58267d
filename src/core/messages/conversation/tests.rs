use super::*;

fn list(messages: &[&str]) -> Vec<String> {
    messages.iter().map(|m| (*m).to_owned()).collect()
}

#[test]
fn turns_begin_with_the_users_words_and_end_with_the_results_of_their_calls() {
    let messages = list(&[
        r#"{"role":"system","content":"You are careful."}"#,
        r#"{"role":"user","content":"Count the rows."}"#,
        r#"{"role":"assistant","content":"Reading.","tool_calls":[{"id":"a","function":{"name":"read","arguments":"{}"}},{"id":"b","function":{"name":"read","arguments":"{}"}}]}"#,
        r#"{"role":"tool","tool_call_id":"b","content":"2 rows"}"#,
        r#"{"role":"tool","tool_call_id":"a","content":"1 row"}"#,
        r#"{"role":"user","content":"Skip the header."}"#,
        r#"{"role":"assistant","content":"Done: 3 rows."}"#,
    ]);
    let read = Conversation::read(Shape::OpenAi, &messages).unwrap();
    assert_eq!(read.lead, 0..2);
    assert_eq!(read.goal.as_deref(), Some("Count the rows."));
    assert_eq!(read.turns.len(), 2);
    assert_eq!(
        (read.turns[0].iteration, read.turns[0].messages.clone()),
        (1, 2..5)
    );
    let a = read.turns[0].calls[0].result.unwrap();
    assert_eq!((a.message, &messages[4][a.start..a.end]), (4, "\"1 row\""));
    assert_eq!(read.turns[1].messages, 5..7);
    assert_eq!(read.turns[1].user_words, vec!["Skip the header."]);
}

#[test]
fn an_earlier_summary_numbers_the_turns_after_it_and_calls_without_ids_pair_by_name() {
    let summary = "=== COMPACTED SUMMARY (Iterations 1-7) ===\n(Originals…)\nbody\n=== END COMPACTED SUMMARY ===";
    let summary_message = format!(
        r#"{{"role":"user","parts":[{{"text":{}}}]}}"#,
        serde_json::to_string(summary).unwrap()
    );
    let messages = vec![
        r#"{"role":"user","parts":[{"text":"Find the outage."}]}"#.to_owned(),
        summary_message,
        r#"{"role":"model","parts":[{"functionCall":{"name":"logs","args":{}}}]}"#.to_owned(),
        r#"{"role":"user","parts":[{"functionResponse":{"name":"logs","response":{"lines":3}}}]}"#
            .to_owned(),
    ];
    let read = Conversation::read(Shape::Gemini, &messages).unwrap();
    assert_eq!(
        read.earlier.as_ref().map(|e| (e.message, e.last)),
        Some((1, 7))
    );
    let call = &read.turns[0].calls[0];
    assert_eq!((read.turns[0].iteration, call.id.as_str()), (8, "logs#8.0"));
    assert_eq!(call.result.map(|at| at.message), Some(3));
    assert_eq!(
        Conversation::read(Shape::Gemini, &["1".to_owned()]),
        Err(NotAMessage { index: 0 })
    );
}

#[test]
fn two_parallel_calls_with_one_id_each_get_their_own_result() {
    let messages = list(&[
        r#"{"role":"user","content":"Read both shards."}"#,
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","function":{"name":"read","arguments":"{\"shard\":1}"}},{"id":"call_0","function":{"name":"read","arguments":"{\"shard\":2}"}}]}"#,
        r#"{"role":"tool","tool_call_id":"call_0","content":"shard 1"}"#,
        r#"{"role":"tool","tool_call_id":"call_0","content":"shard 2"}"#,
    ]);
    let read = Conversation::read(Shape::OpenAi, &messages).unwrap();
    let results: Vec<usize> = (read.turns[0].calls.iter())
        .map(|call| call.result.unwrap().message)
        .collect();
    assert_eq!(
        results,
        vec![2, 3],
        "each result answers its own call, none dropped"
    );
}

#[test]
fn a_second_result_for_an_answered_call_answers_no_other_call() {
    let messages = list(&[
        r#"{"role":"user","content":"Read both shards."}"#,
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"read","arguments":"{}"}},{"id":"b","function":{"name":"read","arguments":"{}"}}]}"#,
        r#"{"role":"tool","tool_call_id":"a","content":"shard 1"}"#,
        r#"{"role":"tool","tool_call_id":"a","content":"shard 1 again"}"#,
        r#"{"role":"tool","tool_call_id":"b","content":"shard 2"}"#,
    ]);
    let read = Conversation::read(Shape::OpenAi, &messages).unwrap();
    let results: Vec<usize> = (read.turns[0].calls.iter())
        .map(|call| call.result.unwrap().message)
        .collect();
    assert_eq!(results, vec![2, 4], "b keeps its own result");
}

#[test]
fn an_approval_answered_in_a_tool_message_of_its_own_is_its_calls_turn() {
    // The AI SDK's tool approval: the call and its request, the answer in a tool message, the
    // result in the next one. Before, the answer began the next turn, which took the result
    // from its call (a summary of the call's turn kept the result alone).
    let messages = list(&[
        r#"{"role":"user","content":"Deploy it."}"#,
        r#"{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"deploy","input":{}},{"type":"tool-approval-request","approvalId":"a1","toolCallId":"c1"}]}"#,
        r#"{"role":"tool","content":[{"type":"tool-approval-response","approvalId":"a1","approved":true}]}"#,
        r#"{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"deploy","output":{"type":"text","value":"done"}}]}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"Deployed."}]}"#,
    ]);
    let read = Conversation::read(Shape::AiSdk, &messages).unwrap();
    assert_eq!(read.turns[0].messages, 1..4);
    assert_eq!(read.turns[0].calls[0].result.map(|at| at.message), Some(3));
    assert_eq!(read.turns[1].messages, 4..5);
}
