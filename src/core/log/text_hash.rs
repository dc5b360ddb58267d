//! A hash of a stored text, to tell whether a log changed since it was read.

/// A 64-bit FNV-1a-style hash of `text`, as 16 hex digits; `absent` for a missing key.
pub(crate) fn text_hash(text: Option<&str>) -> String {
    let Some(text) = text else {
        return "absent".into();
    };
    // FNV-1a over eight-byte words (then the last bytes one by one): every step is a bijection
    // of the state, so texts that differ in one word always hash apart.
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = text.as_bytes().chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word)).wrapping_mul(PRIME);
        hash ^= hash >> 29;
    }
    for &byte in words.remainder() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_tell_texts_apart() {
        assert_eq!(text_hash(Some("")), "cbf29ce484222325");
        assert_ne!(text_hash(Some("[1]")), text_hash(Some("[2]")));
        let text = "[\"exec_mi9x2k1c\",\"tool_4f7q0z\"]";
        for at in 0..text.len() {
            let mut changed = text.as_bytes().to_vec();
            changed[at] ^= 1;
            let changed = String::from_utf8(changed).unwrap();
            assert_ne!(
                text_hash(Some(text)),
                text_hash(Some(&changed)),
                "byte {at}"
            );
        }
        assert_eq!(text_hash(None), "absent");
    }
}
