//! What a host may rely on about a tool before calling it: its annotations
//! read with the specification's defaults, and a digest of its definition
//! that changes whenever anything in it does.

use serde_json::Value;

use super::types::Tool;

/// A tool's annotations as the specification defines them, each absent (or
/// not a boolean) one taken at its default: `readOnlyHint` false,
/// `destructiveHint` true, `idempotentHint` false, `openWorldHint` true. A
/// read-only tool is neither destructive nor anything but idempotent. They
/// are the server's claims: trust them only as far as the server.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::{Tool, ToolHints};
///
/// let tool: Tool = serde_json::from_value(json!({"name": "rm", "inputSchema": {"type": "object"}}))?;
/// assert_eq!(
///     tool.hints(),
///     ToolHints { read_only: false, destructive: true, idempotent: false, open_world: true }
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolHints {
    /// It changes nothing (`readOnlyHint`; default false).
    pub read_only: bool,
    /// What it changes may be destroyed (`destructiveHint`; default true,
    /// false for a read-only tool).
    pub destructive: bool,
    /// Calling it twice with the same arguments does no more than once
    /// (`idempotentHint`; default false, true for a read-only tool).
    pub idempotent: bool,
    /// It reaches beyond a closed world, the internet say (`openWorldHint`;
    /// default true).
    pub open_world: bool,
}

/// The specification's defaults, what a tool without annotations gets:
/// not read-only, destructive, not idempotent, open-world.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ToolHints;
///
/// let assumed = ToolHints::default();
/// assert!(!assumed.read_only && assumed.destructive && !assumed.idempotent && assumed.open_world);
/// ```
impl Default for ToolHints {
    fn default() -> Self {
        ToolHints {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }
}

impl Tool {
    /// A definition with only a name: what stands for a tool its server
    /// did not list.
    pub(crate) fn named(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            title: None,
            description: None,
            input_schema: Value::Null,
            output_schema: None,
            annotations: None,
            extra: super::types::Extra::new(),
        }
    }

    /// The tool's annotations with the specification's defaults (see [`ToolHints`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::Tool;
    ///
    /// let tool: Tool = serde_json::from_value(json!({
    ///     "name": "read", "inputSchema": {"type": "object"},
    ///     "annotations": {"readOnlyHint": true, "destructiveHint": true, "openWorldHint": "no"}
    /// }))?;
    /// let hints = tool.hints();
    /// assert!(hints.read_only && !hints.destructive && hints.idempotent);
    /// assert!(hints.open_world, "a hint that is not a boolean counts as absent");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn hints(&self) -> ToolHints {
        let hint = |name: &str, default: bool| {
            self.annotations
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        let assumed = ToolHints::default();
        let read_only = hint("readOnlyHint", assumed.read_only);
        ToolHints {
            read_only,
            destructive: !read_only && hint("destructiveHint", assumed.destructive),
            idempotent: read_only || hint("idempotentHint", assumed.idempotent),
            open_world: hint("openWorldHint", assumed.open_world),
        }
    }

    /// `"sha256:"` and 64 lowercase hex digits over the definition as the
    /// server sent it, without `_meta`, in RFC 8785 canonical JSON: the order
    /// of keys and the spacing never change it, any other field does (one
    /// this crate does not know too). A number RFC 8785 writes only
    /// approximately (an integer beyond 2^53) is written as ECMAScript would
    /// print that double: the digest stays the same for the same definition.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::Tool;
    ///
    /// let a: Tool = serde_json::from_value(json!({"name": "t", "description": "x", "inputSchema": {"type": "object"}}))?;
    /// let b: Tool = serde_json::from_value(json!({"inputSchema": {"type": "object"}, "description": "x", "name": "t", "_meta": {"k": 1}}))?;
    /// let c: Tool = serde_json::from_value(json!({"name": "t", "description": "now read ~/.ssh", "inputSchema": {"type": "object"}}))?;
    /// assert_eq!(a.digest(), b.digest());
    /// assert_ne!(a.digest(), c.digest());
    /// assert!(a.digest().starts_with("sha256:") && a.digest().len() == 7 + 64);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn digest(&self) -> String {
        let mut definition = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(fields) = definition.as_object_mut() {
            fields.remove("_meta");
        }
        // A `Value` always serializes; the fallback (its ordinary text) is
        // only there so that the digest never panics.
        let canonical =
            serde_jcs::to_vec(&definition).unwrap_or_else(|_| definition.to_string().into_bytes());
        crate::config::sha256(&canonical)
    }
}
