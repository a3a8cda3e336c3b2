//! Client values quoted back in refusals, shortened: an error never carries more than a few
//! dozen bytes of what a client sent, so no rejection's trailers (`grpc-message` and the
//! ErrorInfo detail) grow with the request (issue 44: a 10 KB game id came back whole, and a
//! standard client refused the answer's metadata as too large).
//!
//! [`clip`] is the one shortening of a quoted value; [`bounded`] cuts a whole message (the
//! service's last guard in `service::status`).

/// Longest part of a client's value quoted back in a refusal (bytes, cut at a character).
pub const QUOTED_BYTES: usize = 32;

/// A client's value as a refusal quotes it: whole (Rust-quoted, so control characters show
/// escaped) when at most [`QUOTED_BYTES`] bytes, else its first [`QUOTED_BYTES`] bytes (at a
/// character boundary), an ellipsis and its length: `"abcd…" (10240 bytes)`.
pub fn clip(value: &str) -> String {
    if value.len() <= QUOTED_BYTES {
        return format!("{value:?}");
    }
    format!("{:?}… ({} bytes)", prefix(value, QUOTED_BYTES), value.len())
}

/// `text` cut to at most `max` bytes at a character boundary, with an ellipsis when cut.
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}…", prefix(text, max))
}

/// The longest prefix of `text` of at most `max` bytes that ends at a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_quoted_by_its_head_and_length() {
        assert_eq!(clip("classic"), "\"classic\"");
        assert_eq!(clip("a\u{7}b"), "\"a\\u{7}b\"");
        let long = "x".repeat(10_240);
        assert_eq!(
            clip(&long),
            format!("\"{}\"… (10240 bytes)", "x".repeat(32))
        );
        // 雙 is 3 bytes: 10 of them fill 30 bytes; the 11th would cross 32.
        let wide = "雙".repeat(100);
        assert_eq!(clip(&wide), format!("\"{}\"… (300 bytes)", "雙".repeat(10)));
        assert_eq!(bounded("abcdef", 4), "abcd…");
        assert_eq!(bounded("abc", 4), "abc");
    }
}
