//! Fuzzes the inbound path: any bytes a server writes, read in any chunks,
//! through framing, JSON decoding and routing. Nothing may panic, and the
//! result must not depend on how the bytes were split.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the read sizes and the line limit; the rest is the stream.
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let chunks = [
        1 + (seed & 0x0f) as usize,
        1 + (seed >> 4) as usize * 3,
        4096,
    ];
    let limit = if seed & 0x80 != 0 { 64 } else { 1 << 20 };
    let whole = stdio_mcp::__fuzz::replay(stream, &[usize::MAX], limit);
    let split = stdio_mcp::__fuzz::replay(stream, &chunks, limit);
    assert_eq!(whole, split);
});
