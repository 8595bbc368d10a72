//! The names a group gives its servers' tools: prefixed with the server
//! (`<server>__<tool>`, made safe for the model APIs that call them, at most
//! 64 characters), or bare, the first server in config order keeping a name
//! two servers share. And the `includeTools` / `excludeTools` globs.

/// How a group names the tools of its servers.
///
/// ```
/// use stdio_mcp::group::Naming;
///
/// assert_eq!(Naming::default(), Naming::Prefixed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Naming {
    /// `<server>__<tool>`: every character outside `[A-Za-z0-9_-]` becomes
    /// `_`; a name over 64 characters is cut and ends in `_` and 8 hex digits
    /// of a hash of the whole name, and so are two names that would still be
    /// the same.
    #[default]
    Prefixed,
    /// The tool's own name; where servers share one, the first in config
    /// order keeps it ([`Group::conflicts`](super::Group::conflicts) lists them).
    Bare,
}

/// The longest name a model API takes.
const MAX: usize = 64;

/// FNV-1a, 32 bits: a hash that is the same in every run and build, so that a
/// name given once is given again.
fn hash(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// `name` cut to fit 64 characters with its hash at the end.
fn hashed(safe: &str, whole: &str) -> String {
    let keep = MAX - 9;
    let cut: String = safe.chars().take(keep).collect();
    format!("{cut}_{:08x}", hash(whole))
}

/// Names two servers share under [`Naming::Bare`]: `(name, kept by, left out)`.
pub(crate) type Conflicts = Vec<(String, String, Vec<String>)>;

/// The group's name of each `(server, tool)`, in the order given, and the
/// names [`Naming::Bare`] gave to the first of several servers:
/// `(name, kept by, dropped servers)`. `None` for a tool left out (a bare
/// name another server kept).
pub(crate) fn name_all(naming: Naming, tools: &[(&str, &str)]) -> (Vec<Option<String>>, Conflicts) {
    match naming {
        Naming::Prefixed => (prefixed(tools), Vec::new()),
        Naming::Bare => bare(tools),
    }
}

fn prefixed(tools: &[(&str, &str)]) -> Vec<Option<String>> {
    let wholes: Vec<String> = tools.iter().map(|(s, t)| format!("{s}__{t}")).collect();
    let mut names: Vec<String> = wholes
        .iter()
        .map(|whole| {
            let safe = sanitize(whole);
            if safe.chars().count() > MAX {
                hashed(&safe, whole)
            } else {
                safe
            }
        })
        .collect();
    // Two that are still the same (`a.b` and `a_b`) are both kept apart by hash.
    let mut counts = std::collections::HashMap::new();
    for name in &names {
        *counts.entry(name.clone()).or_insert(0) += 1;
    }
    for (name, whole) in names.iter_mut().zip(&wholes) {
        if counts[name.as_str()] > 1 {
            *name = hashed(&sanitize(whole), whole);
        }
    }
    names.into_iter().map(Some).collect()
}

fn bare(tools: &[(&str, &str)]) -> (Vec<Option<String>>, Conflicts) {
    let mut kept: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut conflicts: Conflicts = Vec::new();
    let mut names = Vec::with_capacity(tools.len());
    for (i, (server, tool)) in tools.iter().enumerate() {
        match kept.get(tool) {
            None => {
                kept.insert(tool, i);
                names.push(Some((*tool).to_owned()));
            }
            Some(&first) => {
                let keeper = tools[first].0;
                match conflicts.iter_mut().find(|c| c.0 == *tool) {
                    Some(conflict) => conflict.2.push((*server).to_owned()),
                    None => conflicts.push((
                        (*tool).to_owned(),
                        keeper.to_owned(),
                        vec![(*server).to_owned()],
                    )),
                }
                names.push(None);
            }
        }
    }
    (names, conflicts)
}

/// Whether `name` matches the glob `pattern` (`*` any run, `?` one character).
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_are_safe_short_and_distinct() {
        let (names, _) = name_all(
            Naming::Prefixed,
            &[
                ("time", "get_current_time"),
                ("my.srv", "do it"),
                ("a", "b.c"),
                ("a", "b_c"),
            ],
        );
        assert_eq!(names[0].as_deref(), Some("time__get_current_time"));
        assert_eq!(names[1].as_deref(), Some("my_srv__do_it"));
        // `a__b_c` twice: both kept apart by a hash of the whole name.
        let (x, y) = (names[2].clone().unwrap(), names[3].clone().unwrap());
        assert_ne!(x, y);
        assert!(
            x.starts_with("a__b_c_") && x.len() == "a__b_c_".len() + 8,
            "{x}"
        );
        let long = "t".repeat(80);
        let (names, _) = name_all(Naming::Prefixed, &[("srv", &long)]);
        let name = names[0].clone().unwrap();
        assert_eq!(name.len(), 64);
        assert_eq!(&name[55..56], "_");
        // The same in every run.
        assert_eq!(
            name,
            name_all(Naming::Prefixed, &[("srv", &long)]).0[0]
                .clone()
                .unwrap()
        );
    }

    #[test]
    fn bare_names_go_to_the_first_server() {
        let (names, conflicts) = name_all(
            Naming::Bare,
            &[("a", "echo"), ("a", "add"), ("b", "echo"), ("c", "echo")],
        );
        assert_eq!(names, [Some("echo".into()), Some("add".into()), None, None]);
        assert_eq!(
            conflicts,
            [(
                "echo".to_owned(),
                "a".to_owned(),
                vec!["b".to_owned(), "c".to_owned()]
            )]
        );
    }

    #[test]
    fn globs() {
        assert!(glob("get_*", "get_time"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*_time", "get_current_time"));
        assert!(!glob("get_*", "set_time"));
        assert!(glob("a*b*c", "aXXbYYc"));
    }
}
