//! Tasks: a tool call the server runs in the background, followed to its
//! end by the plain `call_tool`, in the 2025-11-25 wire and in the 2026-07-28
//! tasks extension's, against the test peer's `--tasks` tools; the wire is
//! checked through the peer's record of what it read.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{peer, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{
    CallOptions, Client, ClientBuilder, ElicitResult, Era, TaskStatus, TaskSupport,
};
use stdio_mcp::ErrorKind;
use stdio_mcp::ServerRequest;

/// A client builder of the tasks peer in `era`.
fn tasks_peer(era: Era) -> ClientBuilder {
    let flags: &[&str] = match era {
        Era::Modern => &["--tasks", "--discover", "modern"],
        _ => &["--tasks"],
    };
    Client::builder(peer(flags)).era(era)
}

/// A client of the tasks peer in `era`, whose elicitations are answered "Ada".
async fn connect(era: Era) -> Client {
    tasks_peer(era)
        .on_elicitation(|_request: ServerRequest| async {
            Ok(ElicitResult::accept(json!({"name": "Ada"})).into())
        })
        .connect()
        .await
        .unwrap()
}

fn methods<'a>(lines: &'a [Value], method: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["method"] == method).collect()
}

/// Options that keep every status reported.
fn reported() -> (CallOptions, Arc<Mutex<Vec<TaskStatus>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let options = CallOptions::new().on_task(move |t| log.lock().unwrap().push(t.clone()));
    (options, seen)
}

const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

#[test]
fn a_task_is_followed_to_its_result_in_both_wires() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let (options, seen) = reported();
            let r = client
                .call_tool_with("job", json!({"polls": 3}), options)
                .await
                .unwrap();
            assert_eq!(r.text(), "done after 3 polls", "{era}");
            let seen = seen.lock().unwrap().clone();
            let statuses: Vec<&str> = seen.iter().map(|t| t.status.as_str()).collect();
            assert_eq!(statuses.first(), Some(&"working"), "{era}: {seen:?}");
            assert_eq!(statuses.last(), Some(&"completed"), "{era}: {seen:?}");
            assert!(seen.iter().all(|t| t.task_id == "task-1"));
            // Each report is a change: the peer's message counts the polls.
            assert_eq!(seen.len(), 4, "{era}: {seen:?}");

            let lines = received(&client.transport()).await;
            let call = methods(&lines, "tools/call")[0];
            match era {
                Era::Modern => {
                    let declared =
                        &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
                    assert_eq!(
                        declared["extensions"]["io.modelcontextprotocol/tasks"],
                        json!({})
                    );
                    assert!(call["params"].get("task").is_none());
                    assert!(methods(&lines, "tasks/result").is_empty());
                }
                _ => {
                    assert_eq!(call["params"]["task"], json!({}));
                    let init = methods(&lines, "initialize")[0];
                    assert_eq!(init["params"]["capabilities"]["tasks"], json!({}));
                    assert_eq!(methods(&lines, "tasks/result").len(), 1);
                }
            }
            assert_eq!(methods(&lines, "tasks/get").len(), 3, "{era}");
            assert!(methods(&lines, "tasks/cancel").is_empty());
            assert!(common::cancels(&lines).is_empty());
            client.close().await.unwrap();
        }
    });
}

#[test]
fn task_support_decides_the_legacy_augmentation() {
    run(20, async {
        let client = connect(Era::Legacy).await;
        let support: Vec<(String, TaskSupport)> = client
            .tools()
            .await
            .unwrap()
            .into_iter()
            .filter(|t| t.name.ends_with("job"))
            .map(|t| (t.name.clone(), t.task_support()))
            .collect();
        assert_eq!(
            support,
            [
                ("job".into(), TaskSupport::Required),
                ("maybe-job".into(), TaskSupport::Optional),
                ("no-job".into(), TaskSupport::Forbidden)
            ]
        );
        let inline = client.call_tool("maybe-job", json!({})).await.unwrap();
        assert_eq!(inline.text(), "maybe-job ran inline");
        let as_task = CallOptions::new().as_task(true);
        let tasked = client
            .call_tool_with("maybe-job", json!({}), as_task)
            .await
            .unwrap();
        assert_eq!(tasked.text(), "done after 2 polls");
        let as_task = CallOptions::new().as_task(true);
        let forbidden = client
            .call_tool_with("no-job", json!({}), as_task)
            .await
            .unwrap();
        assert_eq!(forbidden.text(), "no-job ran inline");
        let lines = received(&client.transport()).await;
        let tasked: Vec<bool> = methods(&lines, "tools/call")
            .iter()
            .map(|c| c["params"].get("task").is_some())
            .collect();
        assert_eq!(tasked, [false, true, false]);
        client.close().await.unwrap();
    });
}

#[test]
fn what_a_task_asks_goes_to_the_handlers_and_each_input_is_answered_once() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            // A modern peer keeps listing the answered request for 3 more polls.
            let args = json!({"ask": true, "lag": 3});
            let (options, seen) = reported();
            let r = client.call_tool_with("job", args, options).await.unwrap();
            assert!(r.text().ends_with("for \"Ada\""), "{era}: {}", r.text());
            assert!(seen
                .lock()
                .unwrap()
                .iter()
                .any(|t| t.status == "input_required"));
            let lines = received(&client.transport()).await;
            match era {
                Era::Modern => {
                    let updates = client
                        .request("test/task_updates", None, CallOptions::new())
                        .await
                        .unwrap();
                    assert_eq!(updates, json!({"name": 1}));
                    let update = methods(&lines, "tasks/update")[0];
                    assert_eq!(update["params"]["taskId"], "task-1");
                    assert_eq!(
                        update["params"]["inputResponses"]["name"]["action"],
                        "accept"
                    );
                    assert!(methods(&lines, "tasks/get").len() >= 4);
                }
                _ => {
                    // The question came through tasks/result, tied to its task.
                    let answers: Vec<&Value> = lines
                        .iter()
                        .filter(|l| l["id"].as_str().is_some_and(|i| i.starts_with("task-ask-")))
                        .collect();
                    assert_eq!(answers.len(), 1, "{lines:?}");
                    assert_eq!(answers[0]["result"]["content"]["name"], "Ada");
                }
            }
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_task_that_fails_is_cancelled_or_gives_garbage_is_an_error_and_an_error_result_is_ok() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let e = client
                .call_tool("job", json!({"outcome": "fail"}))
                .await
                .unwrap_err();
            assert_eq!(e.rpc_error().map(|r| r.code), Some(-32603), "{era}: {e}");
            assert!(e.to_string().contains("the job failed"), "{e}");

            let r = client
                .call_tool("job", json!({"outcome": "error_result"}))
                .await
                .unwrap();
            assert!(r.is_error);
            assert_eq!(r.text(), "the job went wrong");

            let e = client
                .call_tool("job", json!({"outcome": "cancel"}))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Cancelled, "{era}: {e}");
            assert!(
                e.to_string().contains("MCP task task-3 was cancelled"),
                "{e}"
            );

            let e = client
                .call_tool("job", json!({"outcome": "garbage"}))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{era}: {e}");
            assert!(e.to_string().contains("task task-4"), "{e}");
            client.close().await.unwrap();
        }
    });
}

/// Waits until `seen` holds a report of `status`, then a little more.
async fn reported_as(seen: &Mutex<Vec<TaskStatus>>, status: &str) -> TaskStatus {
    loop {
        let found = seen
            .lock()
            .unwrap()
            .iter()
            .find(|t| t.status == status)
            .cloned();
        if let Some(found) = found {
            async_io::Timer::after(Duration::from_millis(100)).await;
            return found;
        }
        async_io::Timer::after(Duration::from_millis(5)).await;
    }
}

/// What the peer read once it read `count` `tasks/cancel` (they are on their
/// way: a drop cannot wait), or after a second of looking.
async fn after_cancels(client: &Client, count: usize) -> Vec<Value> {
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = received(&client.transport()).await;
        if methods(&lines, "tasks/cancel").len() >= count {
            break;
        }
        async_io::Timer::after(Duration::from_millis(10)).await;
    }
    lines
}

#[test]
fn dropping_a_task_call_or_running_out_of_time_cancels_the_task_with_tasks_cancel() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let (options, seen) = reported();
            {
                // Dropped once it asked (a 2025-11-25 tasks/result is then under way).
                let args = json!({"outcome": "never", "ask": true});
                let call = client.call_tool_with("job", args, options);
                let watch = reported_as(&seen, "input_required");
                futures::pin_mut!(call, watch);
                let first = match futures::future::select(call, watch).await {
                    futures::future::Either::Right((first, _)) => first,
                    futures::future::Either::Left((r, _)) => panic!("ended: {r:?}"),
                };
                assert_eq!(first.task_id, "task-1");
            }
            let limited = CallOptions::new().timeout(Duration::from_millis(300));
            let started = Instant::now();
            let e = client
                .call_tool_with("job", json!({"outcome": "never"}), limited)
                .await
                .unwrap_err();
            assert!(started.elapsed() >= Duration::from_millis(300));
            assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
            assert!(e.to_string().contains("tools/call (task task-2)"), "{e}");
            let lines = after_cancels(&client, 2).await;
            assert!(common::cancels(&lines).is_empty(), "{era}: {lines:?}");
            let cancels = methods(&lines, "tasks/cancel");
            let ids: Vec<&Value> = cancels.iter().map(|c| &c["params"]["taskId"]).collect();
            assert_eq!(ids, [&json!("task-1"), &json!("task-2")], "{era}");
            if era == Era::Modern {
                let meta = &cancels[0]["params"]["_meta"];
                assert_eq!(
                    meta["io.modelcontextprotocol/protocolVersion"],
                    "2026-07-28"
                );
            }
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_call_whose_question_is_never_answered_still_ends_at_its_limit() {
    run(20, async {
        for era in ERAS {
            // A person who never answers.
            let client = tasks_peer(era)
                .on_elicitation(|_request: ServerRequest| futures::future::pending())
                .connect()
                .await
                .unwrap();
            let limited = CallOptions::new().timeout(Duration::from_millis(300));
            let args = json!({"outcome": "never", "ask": true});
            let e = client
                .call_tool_with("job", args, limited)
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Timeout, "{era}: {e}");
            let lines = after_cancels(&client, 1).await;
            assert_eq!(methods(&lines, "tasks/cancel").len(), 1, "{era}: {lines:?}");
            client.close().await.unwrap();
        }
    });
}

#[test]
fn polls_wait_as_long_as_the_server_says_each_time() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let started = Instant::now();
            let r = client
                .call_tool("job", json!({"polls": 3, "intervals": [20, 500, 20]}))
                .await
                .unwrap();
            assert_eq!(r.text(), "done after 3 polls");
            assert!(
                started.elapsed() >= Duration::from_millis(540),
                "{era}: {:?}",
                started.elapsed()
            );
            let lines = received(&client.transport()).await;
            assert_eq!(methods(&lines, "tasks/get").len(), 3);
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_status_notification_ends_the_wait_for_the_next_poll() {
    run(20, async {
        let client = connect(Era::Legacy).await;
        // Polls a minute apart: only the notification can end it in time.
        let args = json!({"after_ms": 200, "notify": true, "intervals": [60_000], "polls": 99});
        let r = common::within(10, client.call_tool("job", args))
            .await
            .unwrap();
        assert!(r.text().starts_with("done after 0 polls"), "{}", r.text());
        client.close().await.unwrap();
    });
}

#[test]
fn a_task_is_followed_again_by_its_id() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let (id_tx, id_rx) = futures::channel::oneshot::channel();
            let id_tx = Mutex::new(Some(id_tx));
            let options = CallOptions::new().on_task(move |t| {
                if let Some(tx) = id_tx.lock().unwrap().take() {
                    let _ = tx.send(t.task_id.clone());
                }
            });
            let call = client.call_tool_with("job", json!({"polls": 4}), options);
            let again = async {
                let id = id_rx.await.unwrap();
                client.task(&id).await
            };
            let (first, second) = futures::future::join(call, again).await;
            assert_eq!(first.unwrap().text(), second.unwrap().text(), "{era}");

            let e = client.task("no-such-task").await.unwrap_err();
            assert_eq!(e.rpc_error().map(|r| r.code), Some(-32602), "{era}: {e}");
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_capability_the_server_requires_is_named() {
    run(20, async {
        let client = connect(Era::Modern).await;
        let e = client
            .call_tool("job", json!({"require": "io.example/other"}))
            .await
            .unwrap_err();
        assert_eq!(e.rpc_error().map(|r| r.code), Some(-32021));
        assert!(
            e.to_string().contains(
                r#"the server requires client capabilities this client does not declare: {"extensions":{"io.example/other":{}}}"#
            ),
            "{e}"
        );
        client.close().await.unwrap();
    });
}

async fn one_task(era: Era) {
    let client = connect(era).await;
    let r = client.call_tool("job", json!({"polls": 2})).await.unwrap();
    assert_eq!(r.text(), "done after 2 polls");
    client.close().await.unwrap();
}

#[test]
fn tasks_under_smol() {
    smol::block_on(common::within(20, async {
        one_task(Era::Legacy).await;
        one_task(Era::Modern).await;
    }));
}

#[async_std::test]
async fn tasks_under_async_std() {
    common::within(20, async {
        one_task(Era::Legacy).await;
        one_task(Era::Modern).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_under_tokio() {
    // Spawned, so a task call's future must be `Send`.
    let both = tokio::spawn(async {
        one_task(Era::Legacy).await;
        one_task(Era::Modern).await;
    });
    common::within(20, both).await.unwrap();
}

#[test]
fn a_task_outlives_the_transports_limit_on_each_request() {
    run(20, async {
        // Each request 300 ms at most; the task's result comes after 800 ms.
        let client = Client::builder(peer(&["--tasks"]).timeout(Duration::from_millis(300)))
            .era(Era::Legacy)
            .on_elicitation(|_: ServerRequest| async {
                Ok(ElicitResult::accept(json!({"name": "Ada"})).into())
            })
            .connect()
            .await
            .unwrap();
        let args = json!({"ask": true, "after_ms": 800, "polls": 99, "intervals": [50]});
        let r = client.call_tool("job", args).await.unwrap();
        assert!(r.text().ends_with("for \"Ada\""), "{}", r.text());
        client.close().await.unwrap();
    });
}

#[test]
fn a_tasks_progress_reaches_on_progress_to_its_end() {
    run(20, async {
        for era in ERAS {
            let client = connect(era).await;
            let progress = Arc::new(Mutex::new(Vec::new()));
            let seen = Arc::clone(&progress);
            let options =
                CallOptions::new().on_progress(move |p| seen.lock().unwrap().push(p.progress));
            let r = client
                .call_tool_with("job", json!({"polls": 3, "progress": true}), options)
                .await
                .unwrap();
            assert_eq!(r.text(), "done after 3 polls");
            // Every poll's progress, in order, all before the result.
            assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0], "{era}");
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_task_question_accepted_without_a_field_gets_the_schema_default() {
    run(20, async {
        for era in ERAS {
            // The peer's question gives `name` the default "Grace".
            let client = tasks_peer(era)
                .on_elicitation(|_: ServerRequest| async {
                    Ok(ElicitResult::accept(json!({})).into())
                })
                .connect()
                .await
                .unwrap();
            let r = client.call_tool("job", json!({"ask": true})).await.unwrap();
            assert!(r.text().ends_with("for \"Grace\""), "{era}: {}", r.text());
            client.close().await.unwrap();
            // Turned off, the answer leaves as the handler wrote it.
            let client = tasks_peer(era)
                .on_elicitation(|_: ServerRequest| async {
                    Ok(ElicitResult::accept(json!({})).into())
                })
                .elicitation_defaults(false)
                .connect()
                .await
                .unwrap();
            let r = client.call_tool("job", json!({"ask": true})).await.unwrap();
            assert!(r.text().ends_with("for null"), "{era}: {}", r.text());
            client.close().await.unwrap();
        }
    });
}
