//! `--schemas`: tools whose schemas exercise a client's validation, beside the
//! demo's: ten typed properties, an output schema, a `$ref` to the network,
//! and a schema no validator can compile.

use serde_json::{json, Value};

/// The extra tools of `tools/list`.
pub fn tools() -> Vec<Value> {
    let mut ten = serde_json::Map::new();
    for i in 0..10 {
        let kind = ["string", "integer", "number", "boolean", "string"][i % 5];
        ten.insert(format!("p{i}"), json!({ "type": kind }));
    }
    vec![
        json!({
            "name": "ten",
            "description": "Takes ten typed properties.",
            "inputSchema": { "type": "object", "properties": ten, "required": ["p0", "p1"], "additionalProperties": false }
        }),
        json!({
            "name": "weather",
            "description": "Gives back `give` as its structured result.",
            "inputSchema": { "type": "object", "properties": { "give": {} } },
            "outputSchema": { "type": "object", "properties": { "celsius": { "type": "number" } }, "required": ["celsius"] }
        }),
        json!({
            "name": "netref",
            "description": "Its schema refers to one on the network.",
            "inputSchema": { "$ref": "https://schemas.example.invalid/args.json" }
        }),
        json!({
            "name": "broken",
            "description": "Its schema is not a schema.",
            "inputSchema": { "type": 12 }
        }),
    ]
}

/// The answer to `tools/call` of one of these tools, or `None` for another.
pub fn call(params: &Value) -> Option<Value> {
    let text = |t: &str| json!({ "content": [{ "type": "text", "text": t }] });
    match params["name"].as_str()? {
        "ten" | "netref" | "broken" => Some(text("ok")),
        "weather" => {
            let give = params["arguments"]["give"].clone();
            let mut result = text(&give.to_string());
            result["structuredContent"] = give;
            Some(result)
        }
        _ => None,
    }
}
