//! Splitting a byte stream into lines, in time linear in what was read.
//!
//! The buffer remembers how far it has already looked for a newline, so a line
//! that arrives in many reads is scanned once, not once per read. Bytes are
//! copied only to move a partial line to the front, at most once per byte.

/// How much room a read gets at least. The buffer doubles when it runs short,
/// so a large line is soon read in pipe-sized chunks while an idle one stays small.
const MIN_SPARE: usize = 4 * 1024;
const FIRST_CAPACITY: usize = 8 * 1024;
/// Buffers larger than this are given back after a small line.
const SHRINK_ABOVE: usize = 1024 * 1024;

/// What [`LineBuffer::next_line`] found.
#[derive(Debug, PartialEq)]
pub(crate) enum Line<'a> {
    /// A whole line, without its `\n` or `\r\n`.
    Complete(&'a [u8]),
    /// The current line passed the limit. Its first `limit` bytes are handed
    /// over here once, and the rest of it, up to its newline, is skipped.
    TooLong(&'a [u8]),
}

#[derive(Debug)]
pub(crate) struct LineBuffer {
    buf: Vec<u8>,
    /// Start of the unconsumed bytes.
    start: usize,
    /// End of the bytes read so far.
    end: usize,
    /// Bytes in `start..scanned` hold no newline.
    scanned: usize,
    limit: usize,
    /// Inside an over-long line whose head was already handed out.
    skipping: bool,
    /// Length of the last complete line, to tell a one-off large line from a stream of them.
    last_len: usize,
    /// Bytes moved to the front of the buffer so far.
    #[cfg(test)]
    moved: usize,
}

impl LineBuffer {
    pub(crate) fn new(limit: usize) -> Self {
        LineBuffer {
            buf: Vec::new(),
            start: 0,
            end: 0,
            scanned: 0,
            limit,
            skipping: false,
            last_len: 0,
            #[cfg(test)]
            moved: 0,
        }
    }

    /// Room to read into; pass the count read to [`filled`](Self::filled).
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end && self.start > 0 {
            // Everything read was consumed: start over at the front for free,
            // rather than let the next large line run into the end of the
            // buffer and be moved back piece by piece.
            self.start = 0;
            self.end = 0;
            self.scanned = 0;
        }
        if self.buf.len() - self.end < MIN_SPARE {
            if self.start > 0 {
                #[cfg(test)]
                {
                    self.moved += self.end - self.start;
                }
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.scanned -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < MIN_SPARE {
                let wanted = FIRST_CAPACITY.max(self.buf.len() * 2);
                self.buf.resize(wanted, 0);
            }
        }
        &mut self.buf[self.end..]
    }

    pub(crate) fn filled(&mut self, n: usize) {
        self.end += n;
        debug_assert!(self.end <= self.buf.len());
    }

    /// The next line, or `None` until more bytes arrive.
    pub(crate) fn next_line(&mut self) -> Option<Line<'_>> {
        loop {
            match find_newline(&self.buf[self.scanned..self.end]) {
                Some(offset) => {
                    let newline = self.scanned + offset;
                    let line_start = self.start;
                    self.start = newline + 1;
                    self.scanned = self.start;
                    if self.skipping {
                        self.skipping = false;
                        continue;
                    }
                    let mut line = &self.buf[line_start..newline];
                    if let [head @ .., b'\r'] = line {
                        line = head;
                    }
                    self.last_len = line.len();
                    if line.len() > self.limit {
                        return Some(Line::TooLong(&line[..self.limit]));
                    }
                    return Some(Line::Complete(line));
                }
                None => {
                    self.scanned = self.end;
                    if self.skipping {
                        // Drop what we have of the line; keep nothing of it.
                        self.start = self.end;
                        self.scanned = self.end;
                        return None;
                    }
                    if self.end - self.start > self.limit {
                        let head = self.start;
                        self.skipping = true;
                        self.start = self.end;
                        return Some(Line::TooLong(&self.buf[head..head + self.limit]));
                    }
                    self.maybe_shrink();
                    return None;
                }
            }
        }
    }

    /// Bytes of a last line that had no newline before the end of the stream.
    pub(crate) fn take_unterminated(&mut self) -> Option<Vec<u8>> {
        if self.skipping || self.start == self.end {
            return None;
        }
        let rest = self.buf[self.start..self.end].to_vec();
        self.start = self.end;
        self.scanned = self.end;
        Some(rest)
    }

    /// Gives back a large buffer once it is empty and the line just read was small,
    /// so an idle transport stays small while a stream of large lines keeps its buffer.
    fn maybe_shrink(&mut self) {
        if self.start == self.end
            && self.buf.len() > SHRINK_ABOVE
            && self.last_len < self.buf.len() / 8
        {
            self.buf = Vec::new();
            self.start = 0;
            self.end = 0;
            self.scanned = 0;
        }
    }

    /// The longest line accepted.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held, for tests of linear behaviour.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }
}

/// Position of the first `\n`.
fn find_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(buffer: &mut LineBuffer, bytes: &[u8]) -> Vec<Result<Vec<u8>, Vec<u8>>> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let spare = buffer.spare();
            let n = spare.len().min(rest.len());
            spare[..n].copy_from_slice(&rest[..n]);
            buffer.filled(n);
            rest = &rest[n..];
            while let Some(line) = buffer.next_line() {
                out.push(match line {
                    Line::Complete(l) => Ok(l.to_vec()),
                    Line::TooLong(l) => Err(l.to_vec()),
                });
            }
        }
        out
    }

    #[test]
    fn splits_lines_and_strips_endings() {
        let mut b = LineBuffer::new(1024);
        let got = feed(&mut b, b"a\nbc\r\n\nd");
        assert_eq!(got, vec![Ok(b"a".to_vec()), Ok(b"bc".to_vec()), Ok(vec![])]);
        assert_eq!(b.take_unterminated(), Some(b"d".to_vec()));
    }

    #[test]
    fn newline_search_finds_the_first_newline() {
        for len in 0..40 {
            for pos in 0..=len {
                let mut bytes = vec![b'x'; len];
                if pos < len {
                    bytes[pos] = b'\n';
                }
                let expected = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), expected, "len {len} pos {pos}");
            }
        }
        // A byte just above or below '\n' must not be mistaken for it.
        assert_eq!(find_newline(&[0x0b, 0x09, 0x8a, 0x0a]), Some(3));
    }

    #[test]
    fn over_long_line_yields_its_head_once_and_skips_the_rest() {
        let mut b = LineBuffer::new(10);
        let mut input = vec![b'y'; 200_000];
        input.extend_from_slice(b"\nok\n");
        let got = feed(&mut b, &input);
        assert_eq!(got, vec![Err(vec![b'y'; 10]), Ok(b"ok".to_vec())]);
    }

    #[test]
    fn large_lines_one_after_another_are_never_moved() {
        let mut b = LineBuffer::new(usize::MAX);
        let mut line = vec![b'z'; 3 << 20];
        line.push(b'\n');
        for _ in 0..4 {
            assert_eq!(feed(&mut b, &line).len(), 1);
        }
        assert_eq!(b.moved, 0);
    }

    #[test]
    fn buffer_stays_proportional_to_the_longest_line() {
        let mut b = LineBuffer::new(usize::MAX);
        let mut input = vec![b'z'; 4 << 20];
        input.push(b'\n');
        let got = feed(&mut b, &input);
        assert_eq!(got.len(), 1);
        assert!(b.capacity() <= 2 * (4 << 20) + FIRST_CAPACITY);
        // A small line afterwards gives the large buffer back.
        feed(&mut b, b"small\n");
        b.next_line();
        assert!(b.capacity() <= SHRINK_ABOVE);
    }
}
