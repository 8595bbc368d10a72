//! VS Code's JSON with comments and trailing commas, made plain JSON.

/// JSON with comments and trailing commas (VS Code's `mcp.json`) made plain
/// JSON; each removed character becomes a space, so error positions still hold.
pub(super) fn strip_jsonc(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    // Comments first, so that a comma before one is seen as trailing.
    let mut i = 0;
    while let Some((at, next)) = outside_strings(&out, i) {
        i = at + 1;
        let end = match (out[at], next) {
            (b'/', Some(b'/')) => out[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(out.len(), |p| at + p),
            (b'/', Some(b'*')) => text[at + 2..]
                .find("*/")
                .map_or(out.len(), |e| at + 2 + e + 2),
            _ => continue,
        };
        for byte in &mut out[at..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        i = end;
    }
    let mut i = 0;
    while let Some((at, _)) = outside_strings(&out, i) {
        i = at + 1;
        if out[at] == b',' {
            let next = out[at + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                out[at] = b' ';
            }
        }
    }
    // Only ASCII bytes outside strings were replaced, by ASCII spaces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The next byte at or after `from` that is outside a JSON string (and the
/// byte after it), skipping over strings.
fn outside_strings(bytes: &[u8], from: usize) -> Option<(usize, Option<u8>)> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if !bytes[i].is_ascii_whitespace() {
            return Some((i, bytes.get(i + 1).copied()));
        }
        i += 1;
    }
    None
}
