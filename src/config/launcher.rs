//! Launchers that fetch what they run at each start — `npx`, `bunx`, `pnpm
//! dlx`, `yarn dlx`, `uvx`, `pipx run`, `docker run`, `podman run` — and
//! whether the command line fixes what they fetch: a trusted command line
//! whose package has no exact version runs whatever the registry serves.

use std::fmt;

use super::ServerConfig;
use crate::program_name::program_name;

/// What a launcher in an entry's command line fetches, and whether that is
/// one exact version (or image digest). See [`ServerConfig::fetched`].
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::Config;
///
/// let config = Config::parse(r#"{"mcpServers": {
///     "a": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
///     "b": {"command": "uvx", "args": ["mcp-server-time==0.6.2"]}}}"#)?;
/// let a = config.server("a").unwrap().fetched().unwrap();
/// assert!(!a.pinned);
/// assert_eq!(a.to_string(), "npx @modelcontextprotocol/server-everything: unpinned: the registry decides what runs at each start");
/// assert!(config.server("b").unwrap().fetched().unwrap().pinned);
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fetched {
    /// The launcher as a person names it: `npx`, `uvx`, `pnpm dlx`, `docker run`, …
    pub launcher: String,
    /// What it fetches, as written: `@scope/server@1.2.3`,
    /// `mcp-server-git==2025.1.14`, `ghcr.io/org/image:latest`.
    pub what: String,
    /// Whether that is one exact version, or an image by its `@sha256:` digest.
    pub pinned: bool,
}

impl fmt::Display for Fetched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.pinned {
            "pinned"
        } else {
            "unpinned: the registry decides what runs at each start"
        };
        write!(f, "{} {}: {how}", self.launcher, self.what)
    }
}

impl ServerConfig {
    /// What this entry's launcher fetches at each start, when its command
    /// is one that fetches (`npx`, `bunx`, `pnpm dlx`, `yarn dlx`, `bun x`,
    /// `uvx`, `uv tool run`, `pipx run`, `docker run`, `podman run`) a
    /// package or image from a registry; `None` otherwise, and for a local
    /// path (`npx ./tool`). A package is pinned by an exact version
    /// (`name@1.2.3` for npm's, `name==1.2.3` or `name@1.2.3` for Python's),
    /// an image by its digest (`image@sha256:…`); a tag, a range, `latest`
    /// or nothing is not.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::parse(r#"{"mcpServers": {
    ///     "d": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"]},
    ///     "n": {"command": "node", "args": ["server.js"]}}}"#)?;
    /// let d = config.server("d").unwrap().fetched().unwrap();
    /// assert_eq!((d.launcher.as_str(), d.what.as_str(), d.pinned), ("docker run", "ghcr.io/github/github-mcp-server", false));
    /// assert_eq!(config.server("n").unwrap().fetched(), None);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn fetched(&self) -> Option<Fetched> {
        fetched(&self.command, &self.args)
    }
}

/// The launcher's kind, after its program and subcommand words.
enum Kind {
    Npm,
    Python,
    Pipx,
    Image,
}

/// What the command line `program args` fetches, if it runs a launcher.
pub(super) fn fetched(program: &str, args: &[String]) -> Option<Fetched> {
    let name = program_name(program).to_ascii_lowercase();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (launcher, kind, rest) = match (name.as_str(), words.as_slice()) {
        ("npx" | "bunx" | "pnpx", rest) => (name.clone(), Kind::Npm, rest),
        ("pnpm" | "yarn", ["dlx", rest @ ..]) => (format!("{name} dlx"), Kind::Npm, rest),
        ("bun", ["x", rest @ ..]) => ("bun x".to_owned(), Kind::Npm, rest),
        ("uvx", rest) => (name.clone(), Kind::Python, rest),
        ("uv", ["tool", "run", rest @ ..]) => ("uv tool run".to_owned(), Kind::Python, rest),
        ("pipx", ["run", rest @ ..]) => ("pipx run".to_owned(), Kind::Pipx, rest),
        ("docker" | "podman", ["run", rest @ ..] | ["container", "run", rest @ ..]) => {
            (format!("{name} run"), Kind::Image, rest)
        }
        _ => return None,
    };
    let (named, valued): (&[&str], &[&str]) = match kind {
        Kind::Npm => (
            &["-p", "--package"],
            &[
                "-c",
                "--call",
                "--registry",
                "--cache",
                "--userconfig",
                "--prefix",
                "-w",
                "--workspace",
                "--node-options",
                "--shell",
            ],
        ),
        Kind::Python => (
            &["--from"],
            &[
                "--with",
                "--with-editable",
                "--with-requirements",
                "--python",
                "-p",
                "--index",
                "--index-url",
                "--extra-index-url",
                "--default-index",
                "-f",
                "--find-links",
                "-c",
                "--constraint",
                "--constraints",
                "--override",
                "--overrides",
                "--directory",
                "--project",
                "--cache-dir",
                "--config-file",
                "--env-file",
                "--index-strategy",
                "--keyring-provider",
                "--resolution",
                "--prerelease",
                "--exclude-newer",
            ],
        ),
        Kind::Pipx => (
            &["--spec"],
            &["--python", "--pip-args", "--index-url", "-i", "--backend"],
        ),
        Kind::Image => (
            &[],
            &[
                "-e",
                "--env",
                "--env-file",
                "-v",
                "--volume",
                "--mount",
                "--name",
                "-p",
                "--publish",
                "--network",
                "--net",
                "--entrypoint",
                "-w",
                "--workdir",
                "-u",
                "--user",
                "--platform",
                "-l",
                "--label",
                "--add-host",
                "--cpus",
                "-m",
                "--memory",
                "--pull",
                "--restart",
                "--hostname",
                "-h",
                "--ipc",
                "--pid",
                "--security-opt",
                "--cap-add",
                "--cap-drop",
                "--device",
                "--tmpfs",
                "--ulimit",
                "--log-driver",
                "--log-opt",
                "--runtime",
                "--shm-size",
                "--stop-signal",
                "--group-add",
                "--dns",
                "--expose",
                "--gpus",
                "--userns",
                "--cidfile",
            ],
        ),
    };
    let mut what: Option<&str> = None;
    let mut words = rest.iter();
    while let Some(&word) = words.next() {
        if word == "--" {
            if what.is_none() {
                what = words.next().copied();
            }
            break;
        }
        if let Some((option, value)) = word.split_once('=').filter(|(o, _)| o.starts_with('-')) {
            if named.contains(&option) {
                what = Some(value);
            }
            continue;
        }
        if named.contains(&word) {
            what = words.next().copied();
            continue;
        }
        if valued.contains(&word) {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        // The first word that is no option: the package (or the command a
        // named package provides), or the image.
        if what.is_none() {
            what = Some(word);
        }
        break;
    }
    let what = what?;
    let local = what.starts_with('.') || what.starts_with('/') || what.contains(":\\");
    if local || what.starts_with("file:") {
        return None;
    }
    let pinned = match kind {
        Kind::Npm => npm_pinned(what),
        Kind::Python | Kind::Pipx => python_pinned(what),
        Kind::Image => what.contains("@sha256:"),
    };
    Some(Fetched {
        launcher,
        what: what.to_owned(),
        pinned,
    })
}

/// `name@1.2.3` or `@scope/name@1.2.3`: an exact version, not a tag or range.
fn npm_pinned(spec: &str) -> bool {
    let version = match spec.strip_prefix('@') {
        Some(scoped) => scoped.split_once('@').map(|(_, v)| v),
        None => spec.split_once('@').map(|(_, v)| v),
    };
    version.is_some_and(exact_semver)
}

/// `name==1.2.3` (or `name[extra]==1.2.3`), or uv's `name@1.2.3`.
fn python_pinned(spec: &str) -> bool {
    if let Some((_, version)) = spec.split_once("==") {
        return !version.is_empty() && !version.contains('*');
    }
    spec.split_once('@')
        .is_some_and(|(name, version)| !name.is_empty() && exact_release(version.trim()))
}

/// `1.2.3`, with an optional `-pre` and `+build`.
fn exact_semver(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A release number of digits and dots (`0.6.2`, `2025.4.7`).
fn exact_release(version: &str) -> bool {
    !version.is_empty()
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::fetched;

    /// A command line, and what it fetches: launcher, what, pinned.
    type Row = (
        &'static str,
        &'static [&'static str],
        Option<(&'static str, &'static str, bool)>,
    );

    /// Real command lines, from servers' READMEs and hosts' configs.
    #[test]
    fn launchers_and_their_pins() {
        let table: &[Row] = &[
            (
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                Some(("npx", "@modelcontextprotocol/server-filesystem", false)),
            ),
            (
                "npx",
                &["-y", "@modelcontextprotocol/server-everything@2025.9.25"],
                Some((
                    "npx",
                    "@modelcontextprotocol/server-everything@2025.9.25",
                    true,
                )),
            ),
            (
                "npx",
                &["@playwright/mcp@latest"],
                Some(("npx", "@playwright/mcp@latest", false)),
            ),
            (
                "npx",
                &["-y", "tavily-mcp@0.1.4"],
                Some(("npx", "tavily-mcp@0.1.4", true)),
            ),
            (
                "npx",
                &["-y", "tavily-mcp@^0.1.4"],
                Some(("npx", "tavily-mcp@^0.1.4", false)),
            ),
            (
                "npx.cmd",
                &[
                    "-y",
                    "--package=@upstash/context7-mcp@1.0.14",
                    "context7-mcp",
                ],
                Some(("npx", "@upstash/context7-mcp@1.0.14", true)),
            ),
            (
                "npx",
                &["--registry", "https://r.example", "mcp-remote"],
                Some(("npx", "mcp-remote", false)),
            ),
            ("npx", &["./local-server"], None),
            (
                "bunx",
                &["some-mcp@1.2.3-beta.1"],
                Some(("bunx", "some-mcp@1.2.3-beta.1", true)),
            ),
            (
                "pnpm",
                &["dlx", "@scope/server"],
                Some(("pnpm dlx", "@scope/server", false)),
            ),
            (
                "yarn",
                &["dlx", "@scope/server@2.0.0"],
                Some(("yarn dlx", "@scope/server@2.0.0", true)),
            ),
            (
                "uvx",
                &["mcp-server-git", "--repository", "."],
                Some(("uvx", "mcp-server-git", false)),
            ),
            (
                "uvx",
                &["mcp-server-time==0.6.2"],
                Some(("uvx", "mcp-server-time==0.6.2", true)),
            ),
            (
                "uvx",
                &["--from", "mcp-server-fetch==2025.4.7", "mcp-server-fetch"],
                Some(("uvx", "mcp-server-fetch==2025.4.7", true)),
            ),
            (
                "uvx",
                &["--python", "3.12", "awslabs.core-mcp-server@latest"],
                Some(("uvx", "awslabs.core-mcp-server@latest", false)),
            ),
            ("uvx", &["ruff@0.6.0"], Some(("uvx", "ruff@0.6.0", true))),
            ("uvx", &["--from", ".", "my-server"], None),
            (
                "uv",
                &["tool", "run", "mcp-server-sqlite", "--db-path", "x.db"],
                Some(("uv tool run", "mcp-server-sqlite", false)),
            ),
            ("uv", &["run", "--directory", ".", "server.py"], None),
            (
                "pipx",
                &["run", "--spec", "mcp-server-x==1.0.0", "mcp-server-x"],
                Some(("pipx run", "mcp-server-x==1.0.0", true)),
            ),
            (
                "pipx",
                &["run", "mcp-server-x"],
                Some(("pipx run", "mcp-server-x", false)),
            ),
            (
                "docker",
                &[
                    "run",
                    "-i",
                    "--rm",
                    "-e",
                    "GITHUB_PERSONAL_ACCESS_TOKEN",
                    "ghcr.io/github/github-mcp-server",
                ],
                Some(("docker run", "ghcr.io/github/github-mcp-server", false)),
            ),
            (
                "docker",
                &["run", "-i", "--rm", "mcp/fetch:latest"],
                Some(("docker run", "mcp/fetch:latest", false)),
            ),
            (
                "/usr/bin/docker",
                &[
                    "run",
                    "-i",
                    "--rm",
                    "-v",
                    "/data:/data",
                    "mcp/sqlite@sha256:0123abcd",
                ],
                Some(("docker run", "mcp/sqlite@sha256:0123abcd", true)),
            ),
            (
                "podman",
                &[
                    "container",
                    "run",
                    "-i",
                    "--env=X=1",
                    "quay.io/org/server:1.0",
                ],
                Some(("podman run", "quay.io/org/server:1.0", false)),
            ),
            ("docker", &["exec", "-i", "box", "server"], None),
            ("node", &["server.js"], None),
            ("python3", &["-m", "mcp_server_time"], None),
        ];
        for (program, args, expected) in table {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            let got = fetched(program, &args);
            let got = got
                .as_ref()
                .map(|f| (f.launcher.as_str(), f.what.as_str(), f.pinned));
            assert_eq!(got, *expected, "{program} {args:?}");
        }
    }
}
