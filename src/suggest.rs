//! "Did you mean": the one rule by which the crate's messages, and its
//! command line's, offer a known name for a mistyped one.

/// The name of `known` that `wrong` is a likely typo of: the same but for
/// case, or a few edits away — one for names of up to four characters,
/// else a third of the name's length (at least two) — where swapping two
/// neighbours is one edit (`gti` is one from `git`). The nearest wins; a
/// tie goes to the first.
///
/// # Examples
///
/// ```
/// use stdio_mcp::closest_name;
///
/// assert_eq!(closest_name("gti", ["git", "time"]), Some("git"));
/// assert_eq!(closest_name("Command", ["command", "args"]), Some("command"));
/// assert_eq!(closest_name("countdwn", ["echo", "countdown"]), Some("countdown"));
/// assert_eq!(closest_name("zzzz", ["git", "time"]), None);
/// ```
pub fn closest_name<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = wrong.to_lowercase();
    known
        .into_iter()
        .map(|name| (distance(&lower, &name.to_lowercase()), name))
        .filter(|(d, name)| {
            let len = name.chars().count();
            *d <= if len <= 4 { 1 } else { (len / 3).max(2) }
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Edit distance by characters, a swap of two neighbours counting as one
/// edit.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}
