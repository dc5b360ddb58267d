use super::*;

#[test]
fn sentences_are_cut_at_their_ends() {
    assert_eq!(first_sentence("Load the CSV. Then count."), "Load the CSV.");
    assert_eq!(first_sentence("v1.2 is out\nnext"), "v1.2 is out");
    assert_eq!(last_sentence("First. Second one."), "Second one.");
    assert_eq!(clip("### heading   text", 40), "heading text");
    assert_eq!(clip("abcdef", 4), "abcdef");
    assert_eq!(clip("abcdef gh", 4), "abcdef…");
    let call = "vfs.read(\"web_events\") returned 42";
    assert_eq!(clip(call, 25), "vfs.read(\"web_events\")…");
}
