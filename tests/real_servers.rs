//! The client against real MCP servers nobody here wrote:
//! `@modelcontextprotocol/server-everything` (npm) and `mcp-server-time` (PyPI),
//! installed pinned into `.servers/` by `scripts/install-test-servers`.
//!
//! Without them these tests say so on stderr and do nothing; with
//! `STDIO_MCP_REQUIRE_SERVERS` set (as `.ci/run` does) a missing server fails.

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use common::{installed, run};
use serde_json::{json, Value};
use stdio_mcp::client::{Client, Content, Era, LoggingLevel, Progress, RestartPolicy};
use stdio_mcp::ServerRequest;
use stdio_mcp::TransportBuilder;

fn everything(test: &str) -> Option<TransportBuilder> {
    installed("node_modules/.bin/mcp-server-everything", test)
}

fn text(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn everything_handshake_echo_and_sum() {
    let Some(builder) = everything("everything_handshake_echo_and_sum") else {
        return;
    };
    run(30, async {
        let client = Client::connect(builder).await.unwrap();
        // It answers the server/discover probe "method not found": a legacy server.
        assert_eq!(client.era(), stdio_mcp::client::Era::Legacy);
        assert_eq!(client.server_info().name, "mcp-servers/everything");
        assert_eq!(client.protocol_version(), "2025-11-25");
        client.ping().await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert!(tools.iter().all(|t| t.input_schema.is_object()));
        let r = client
            .call_tool("echo", json!({"message": "hello"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: hello");
        let r = client
            .call_tool("get-sum", json!({"a": 19, "b": 23}))
            .await
            .unwrap();
        assert!(r.text().contains("42"), "{}", r.text());
        client.close().await.unwrap();
    });
}

#[test]
fn everything_sees_env_set_and_removed() {
    let Some(builder) = everything("everything_sees_env_set_and_removed") else {
        return;
    };
    std::env::set_var("STDIO_MCP_PARENT_ONLY", "should not arrive");
    std::env::set_var("STDIO_MCP_INHERITED", "arrives");
    run(30, async {
        let builder = builder
            .env("STDIO_MCP_SET", "set by the test")
            .env_remove("STDIO_MCP_PARENT_ONLY");
        let client = Client::connect(builder).await.unwrap();
        let r = client.call_tool("get-env", json!({})).await.unwrap();
        let env: Value = serde_json::from_str(&r.text()).unwrap();
        assert_eq!(env["STDIO_MCP_SET"], "set by the test");
        assert_eq!(env["STDIO_MCP_INHERITED"], "arrives");
        assert!(
            env.get("STDIO_MCP_PARENT_ONLY").is_none(),
            "removed with env_remove"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn everything_long_running_operation_reports_progress() {
    let Some(builder) = everything("everything_long_running_operation_reports_progress") else {
        return;
    };
    run(30, async {
        let client = Client::connect(builder).await.unwrap();
        let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let log = Arc::clone(&seen);
        let r = client
            .call_tool_with_progress(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 4}),
                move |p| log.lock().unwrap().push(p.clone()),
            )
            .await
            .unwrap();
        assert!(!r.is_error);
        let seen = seen.lock().unwrap().clone();
        let steps: Vec<f64> = seen.iter().map(|p| p.progress).collect();
        assert_eq!(
            steps,
            [1.0, 2.0, 3.0, 4.0],
            "every step, in order, before the result"
        );
        assert_eq!(seen[0].total, Some(4.0));
        client.close().await.unwrap();
    });
}

#[test]
fn everything_simulated_logging_reaches_the_user() {
    let Some(builder) = everything("everything_simulated_logging_reaches_the_user") else {
        return;
    };
    run(30, async {
        let (messages, handler) = common::notifications_of("notifications/message");
        let builder = builder.on_notification(handler);
        let client = Client::connect(builder).await.unwrap();
        client.set_logging_level(LoggingLevel::Debug).await.unwrap();
        client
            .call_tool("toggle-simulated-logging", json!({}))
            .await
            .unwrap();
        common::eventually(15, || !messages.lock().unwrap().is_empty()).await;
        let params = messages.lock().unwrap()[0].clone();
        assert!(
            params["level"].is_string() && !params["data"].is_null(),
            "{params}"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn everything_prompts_and_resources() {
    let Some(builder) = everything("everything_prompts_and_resources") else {
        return;
    };
    run(30, async {
        let client = Client::connect(builder).await.unwrap();
        let prompts = client.list_prompts().await.unwrap();
        assert!(
            prompts.iter().any(|p| p.name == "simple-prompt"),
            "{prompts:?}"
        );
        let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
        assert!(args
            .arguments
            .iter()
            .any(|a| a.name == "city" && a.required));
        let simple = client
            .get_prompt("simple-prompt", Value::Null)
            .await
            .unwrap();
        assert!(!simple.messages.is_empty());
        let filled = client
            .get_prompt("args-prompt", json!({"city": "Lisbon"}))
            .await
            .unwrap();
        assert!(text(
            &filled
                .messages
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
        )
        .contains("Lisbon"));

        let resources = client.list_resources().await.unwrap();
        assert!(!resources.is_empty());
        let templates = client.list_resource_templates().await.unwrap();
        assert!(
            templates.iter().any(|t| t.uri_template.contains("{")),
            "{templates:?}"
        );
        let first = &resources[0];
        let read = client.read_resource(&first.uri).await.unwrap();
        assert_eq!(read.contents[0].uri, first.uri);
        assert!(read.contents[0].text.is_some() || read.contents[0].blob.is_some());
        client.close().await.unwrap();
    });
}

#[test]
fn time_server_gives_the_current_time() {
    let Some(builder) = installed(
        "venv/bin/mcp-server-time",
        "time_server_gives_the_current_time",
    ) else {
        return;
    };
    run(30, async {
        let client = Client::connect(builder).await.unwrap();
        // It answers the probe with a DiscoverResult: every call is stateless.
        assert_eq!(client.era(), stdio_mcp::client::Era::Modern);
        assert_eq!(client.protocol_version(), "2026-07-28");
        assert_eq!(client.server_info().name, "mcp-time");
        client.ping().await.unwrap();
        let tools = common::tool_names(&client).await;
        assert!(tools.contains(&"get_current_time".to_owned()), "{tools:?}");
        let r = client
            .call_tool("get_current_time", json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert!(!r.is_error, "{r:?}");
        // Read as a type, whether it sent structuredContent or JSON text.
        #[derive(serde::Deserialize)]
        struct Time {
            timezone: String,
            datetime: String,
        }
        let answer: Time = r.clone().into_result().unwrap().structured().unwrap();
        assert_eq!(answer.timezone, "UTC");
        assert!(answer.datetime.starts_with("20"), "{}", answer.datetime);
        // The cached catalog has the tool, and asks the server only once.
        let cached = client.tools().await.unwrap();
        assert_eq!(client.tools().await.unwrap(), cached);
        assert!(cached.iter().any(|t| t.name == "get_current_time"));
        let e = client
            .call_tool("get_current_time", json!({"timezone": "Not/AZone"}))
            .await;
        // The server reports a bad zone either as a tool error or a JSON-RPC error.
        match e {
            Ok(r) => assert!(r.is_error, "{r:?}"),
            Err(e) => assert_eq!(e.category(), Some("mcp"), "{e}"),
        }
        client.close().await.unwrap();
    });
}

#[test]
fn everything_completion_and_resource_subscription() {
    let Some(builder) = everything("everything_completion_and_resource_subscription") else {
        return;
    };
    run(30, async {
        let (updates, handler) = common::notifications_of("notifications/resources/updated");
        let builder = builder.on_notification(handler);
        let client = Client::connect(builder).await.unwrap();
        let done = client
            .complete(
                json!({"type": "ref/prompt", "name": "completable-prompt"}),
                "department",
                "S",
            )
            .await
            .unwrap();
        assert_eq!(done.completion.values, ["Sales", "Support"]);

        let uri = client.list_resources().await.unwrap()[0].uri.clone();
        client.subscribe(&uri).await.unwrap();
        // The server sends one update at once when its simulation starts, then every 5 s.
        client
            .call_tool("toggle-subscriber-updates", json!({}))
            .await
            .unwrap();
        common::eventually(15, || !updates.lock().unwrap().is_empty()).await;
        assert_eq!(updates.lock().unwrap()[0]["uri"], json!(uri));
        client.unsubscribe(&uri).await.unwrap();
        client.close().await.unwrap();
    });
}

#[test]
fn everything_asks_our_sampling_and_roots_handlers() {
    let Some(builder) = everything("everything_asks_our_sampling_and_roots_handlers") else {
        return;
    };
    run(30, async {
        // Without the handlers the server offers no tools that need them.
        let plain =
            Client::connect(everything("everything_asks_our_sampling_and_roots_handlers").unwrap())
                .await
                .unwrap();
        let names = common::tool_names(&plain).await;
        assert!(
            !names
                .iter()
                .any(|n| n == "trigger-sampling-request" || n == "get-roots-list"),
            "{names:?}"
        );
        plain.close().await.unwrap();

        let client = Client::builder(builder)
            .on_sampling(|r: ServerRequest| async move {
                let asked = r.params.as_ref().unwrap()["messages"][0]["content"]["text"].clone();
                Ok(json!({
                    "role": "assistant",
                    "content": { "type": "text", "text": format!("sampled: {}", asked.as_str().unwrap_or("")) },
                    "model": "stdio-mcp-test-model",
                    "stopReason": "endTurn"
                }))
            })
            .on_roots_list(|_: ServerRequest| async { Ok(json!({ "roots": [{ "uri": "file:///srv/project", "name": "project" }] })) })
            .connect()
            .await
            .unwrap();
        let names = common::tool_names(&client).await;
        assert!(
            names.iter().any(|n| n == "trigger-sampling-request"),
            "{names:?}"
        );
        let r = client
            .call_tool(
                "trigger-sampling-request",
                json!({ "prompt": "hello there", "maxTokens": 10 }),
            )
            .await
            .unwrap();
        let text = r.text();
        assert!(
            text.contains("stdio-mcp-test-model") && text.contains("hello there"),
            "{text}"
        );
        let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
        assert!(
            roots.text().contains("file:///srv/project"),
            "{}",
            roots.text()
        );
        client.close().await.unwrap();
    });
}

/// A real server killed from outside (an OOM kill, a laptop's sleep) is
/// started again in its era, and calls after it go to the new process.
#[test]
fn killed_real_servers_are_restarted_in_their_era() {
    let test = "killed_real_servers_are_restarted_in_their_era";
    let (Some(everything), Some(time)) = (
        everything(test),
        installed("venv/bin/mcp-server-time", test),
    ) else {
        return;
    };
    run(60, async {
        let policy = RestartPolicy::new().backoff(
            std::time::Duration::from_millis(10),
            std::time::Duration::from_millis(100),
        );
        for (builder, era, tool, args) in [
            (everything, Era::Legacy, "echo", json!({"message": "again"})),
            (
                time,
                Era::Modern,
                "get_current_time",
                json!({"timezone": "UTC"}),
            ),
        ] {
            let client = Client::builder(builder)
                .restart(policy)
                .connect()
                .await
                .unwrap();
            assert_eq!(client.era(), era);
            let before = client.transport().pid();
            common::kill_pid(before);
            common::eventually(30, || {
                let now = client.transport();
                now.pid() != before && now.is_alive()
            })
            .await;
            assert_eq!(client.restarts(), 1);
            assert_eq!(client.era(), era);
            let r = client.call_tool(tool, args).await.unwrap();
            assert!(!r.is_error, "{r:?}");
            client.close().await.unwrap();
        }
    });
}

#[test]
fn everything_never_sees_params_that_would_hang_the_call() {
    let Some(builder) = everything("everything_never_sees_params_that_would_hang_the_call") else {
        return;
    };
    run(30, async {
        use stdio_mcp::client::CallOptions;
        use stdio_mcp::ErrorKind;
        let client = Client::builder(builder)
            .name("everything")
            .connect()
            .await
            .unwrap();
        // server-everything drops a request whose params are not an object,
        // without an answer: refused here, it can never hang the caller.
        let e = client
            .request("tools/list", Some(json!("str")), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments);
        assert!(
            e.to_string()
                .starts_with("server \"everything\": MCP call not sent"),
            "{e}"
        );
        let e = client.call_tool("echo", json!("hello")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments);
        // An unknown tool: this server answers with an isError result, not an error.
        let unknown = client.call_tool("no-such-tool", json!({})).await;
        let unknown = unknown.unwrap();
        assert!(unknown.is_error, "{unknown:?}");
        assert!(
            unknown.text().contains("no-such-tool not found"),
            "{}",
            unknown.text()
        );
        // For callers that want `?` to stop at it: an error of kind Tool.
        let failed = unknown.into_result().unwrap_err();
        assert_eq!(failed.kind(), ErrorKind::Tool);
        assert!(
            failed.to_string().contains("no-such-tool not found"),
            "{failed}"
        );
        // The client and its server are fine.
        client.ping().await.unwrap();
        client.close().await.unwrap();
    });
}

#[test]
fn everything_elicitation_is_answered_through_the_typed_builder() {
    let Some(builder) = everything("everything_elicitation_is_answered_through_the_typed_builder")
    else {
        return;
    };
    run(30, async {
        use stdio_mcp::client::{ElicitRequest, ElicitResult};
        let asked = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&asked);
        let client = Client::builder(builder)
            .on_elicitation(move |request: ServerRequest| {
                let seen = Arc::clone(&seen);
                async move {
                    let request = ElicitRequest::from_request(&request)?;
                    *seen.lock().unwrap() = Some(request);
                    Ok(ElicitResult::accept(json!({"name": "Ada"})).into())
                }
            })
            .connect()
            .await
            .unwrap();
        let result = client
            .call_tool("trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        // The server read the answer the builder made.
        assert!(result.text().contains("- Name: Ada"), "{}", result.text());
        assert!(!result.is_error);
        let asked = asked.lock().unwrap().take().expect("the handler was asked");
        let ElicitRequest::Form {
            requested_schema, ..
        } = asked
        else {
            panic!("a form: {asked:?}");
        };
        assert_eq!(requested_schema["required"], json!(["name"]));
        client.close().await.unwrap();
    });
}

#[test]
fn the_real_servers_serve_as_one_group() {
    let (Some(everything), Some(_)) = (
        everything("the_real_servers_serve_as_one_group"),
        installed(
            "venv/bin/mcp-server-time",
            "the_real_servers_serve_as_one_group",
        ),
    ) else {
        return;
    };
    drop(everything);
    run(60, async {
        use stdio_mcp::config::Config;
        use stdio_mcp::group::{Group, ServerState};
        let servers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".servers");
        let config = Config::parse(
            &json!({ "mcpServers": {
                "everything": { "command": servers.join("node_modules/.bin/mcp-server-everything") },
                "time": { "command": servers.join("venv/bin/mcp-server-time") },
            } })
            .to_string(),
        )
        .unwrap();
        let group = Group::builder(config).connect().await;
        let states: Vec<ServerState> = group.servers().into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            states,
            [
                ServerState::Ready(Era::Legacy),
                ServerState::Ready(Era::Modern)
            ]
        );
        let tools = group.tools().await;
        assert!(tools.iter().any(|t| t.name == "everything__echo"));
        assert!(tools.iter().any(|t| t.name == "time__get_current_time"));
        assert!(tools.iter().all(|t| t.name.len() <= 64));
        let echoed = group
            .call_tool("everything__echo", json!({"message": "grouped"}))
            .await
            .unwrap();
        assert_eq!(echoed.text(), "Echo: grouped");
        let now = group
            .call_tool("time__get_current_time", json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert!(now.text().contains("UTC"), "{}", now.text());
        group.close().await;
    });
}

/// `simulate-research-query` requires a task (2025-11-25 wire): the plain
/// `call_tool` makes it one, follows it and returns its report; asked to be
/// ambiguous, it asks the elicitation handler through `tasks/result`.
#[test]
fn everything_research_runs_as_a_task_and_asks_through_it() {
    let test = "everything_research_runs_as_a_task_and_asks_through_it";
    let (Some(plain), Some(asking)) = (everything(test), everything(test)) else {
        return;
    };
    run(60, async {
        use stdio_mcp::client::{CallOptions, ElicitRequest, ElicitResult, TaskSupport};
        let client = Client::connect(plain).await.unwrap();
        let tools = client.tools().await.unwrap();
        let research = tools
            .iter()
            .find(|t| t.name == "simulate-research-query")
            .unwrap();
        assert_eq!(research.task_support(), TaskSupport::Required);
        let statuses = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&statuses);
        let options =
            CallOptions::new().on_task(move |t| seen.lock().unwrap().push(t.status.clone()));
        let report = client
            .call_tool_with("simulate-research-query", json!({"topic": "rust"}), options)
            .await
            .unwrap();
        assert!(
            report.text().contains("# Research Report: rust"),
            "{}",
            report.text()
        );
        let statuses = statuses.lock().unwrap().clone();
        assert_eq!(
            statuses.first().map(String::as_str),
            Some("working"),
            "{statuses:?}"
        );
        assert_eq!(
            statuses.last().map(String::as_str),
            Some("completed"),
            "{statuses:?}"
        );
        client.close().await.unwrap();

        let questions = Arc::new(Mutex::new(0));
        let asked = Arc::clone(&questions);
        let client = Client::builder(asking)
            .on_elicitation(move |request: ServerRequest| {
                *asked.lock().unwrap() += 1;
                async move {
                    let ElicitRequest::Form {
                        requested_schema, ..
                    } = ElicitRequest::from_request(&request)?
                    else {
                        return Ok(ElicitResult::decline().into());
                    };
                    let first =
                        &requested_schema["properties"]["interpretation"]["oneOf"][1]["const"];
                    Ok(ElicitResult::accept(json!({ "interpretation": first })).into())
                }
            })
            .connect()
            .await
            .unwrap();
        let report = client
            .call_tool(
                "simulate-research-query",
                json!({"topic": "python", "ambiguous": true}),
            )
            .await
            .unwrap();
        assert!(
            report.text().contains("# Research Report: python (snake)"),
            "{}",
            report.text()
        );
        assert_eq!(*questions.lock().unwrap(), 1);
        client.close().await.unwrap();
    });
}

/// A research call dropped while it runs is cancelled with `tasks/cancel`:
/// the server then reports the task cancelled to whoever follows it by id.
#[test]
fn everything_research_dropped_is_cancelled_on_the_server() {
    let Some(builder) = everything("everything_research_dropped_is_cancelled_on_the_server") else {
        return;
    };
    run(60, async {
        use stdio_mcp::client::CallOptions;
        use stdio_mcp::ErrorKind;
        let client = Client::connect(builder).await.unwrap();
        let (id_tx, id_rx) = futures::channel::oneshot::channel();
        let id_tx = Mutex::new(Some(id_tx));
        let options = CallOptions::new().on_task(move |t| {
            if let Some(tx) = id_tx.lock().unwrap().take() {
                let _ = tx.send(t.task_id.clone());
            }
        });
        let id = {
            let call =
                client.call_tool_with("simulate-research-query", json!({"topic": "rust"}), options);
            futures::pin_mut!(call);
            match futures::future::select(call, id_rx).await {
                futures::future::Either::Right((id, _)) => id.unwrap(),
                futures::future::Either::Left((r, _)) => panic!("ended before its task: {r:?}"),
            }
        };
        let e = client.task(&id).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
        client.close().await.unwrap();
    });
}
