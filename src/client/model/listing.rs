//! The items of the paginated lists, and a whole list with its pages'
//! caching hints.

use super::offers::{Prompt, Resource, ResourceTemplate};
use super::types::Tool;

/// The items a list operation returns ([`Tool`], [`Prompt`], [`Resource`],
/// [`ResourceTemplate`]), for [`Client::listing`](crate::client::Client::listing).
/// Sealed: implemented here only.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::{ListItem, Tool};
///
/// assert_eq!(Tool::METHOD, "tools/list");
/// ```
pub trait ListItem: serde::de::DeserializeOwned + sealed::Sealed {
    /// The list request's method, e.g. `tools/list`.
    const METHOD: &'static str;
    /// The result's field holding the items, e.g. `tools`.
    const FIELD: &'static str;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! list_item {
    ($item:ty, $method:literal, $field:literal) => {
        impl sealed::Sealed for $item {}
        impl ListItem for $item {
            const METHOD: &'static str = $method;
            const FIELD: &'static str = $field;
        }
    };
}

list_item!(Tool, "tools/list", "tools");
list_item!(Prompt, "prompts/list", "prompts");
list_item!(Resource, "resources/list", "resources");
list_item!(
    ResourceTemplate,
    "resources/templates/list",
    "resourceTemplates"
);

/// Every item of a list operation, with the caching hints of its pages
/// (2026-07-28: `ttlMs` and `cacheScope`, see the spec's caching utility).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, Tool};
///
/// let client = Client::connect(["my-mcp-server"]).await?;
/// let tools = client.listing::<Tool>().await?;
/// println!("{} tools, fresh: {}", tools.items.len(), tools.is_fresh());
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Listing<T> {
    /// The items of every page, in order.
    pub items: Vec<T>,
    /// Until when the whole list may be taken as fresh: the earliest of each
    /// page's arrival plus its `ttlMs` (a negative one counts as 0). `None`
    /// when a page had no `ttlMs` (a legacy server): no freshness promised.
    pub fresh_until: Option<std::time::Instant>,
    /// `"private"` if any page said so, else `"public"` if one did; `None`
    /// when no page said.
    pub cache_scope: Option<String>,
}

impl<T> Listing<T> {
    /// Whether the server's hints still call this list fresh.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Prompt};
    ///
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// let mut prompts = client.listing::<Prompt>().await?;
    /// if !prompts.is_fresh() {
    ///     prompts = client.listing::<Prompt>().await?;
    /// }
    /// # let _ = prompts;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn is_fresh(&self) -> bool {
        self.fresh_until
            .is_some_and(|until| std::time::Instant::now() < until)
    }
}
