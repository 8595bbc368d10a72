//! Requests, responses, notifications and server requests against a real child.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{cancels, peer, received, run, Rng};
use serde_json::{json, Value};
use stdio_mcp::{Error, Notification, RequestOptions, RpcError, ServerRequest};

#[test]
fn request_gets_its_result_and_ids_count_from_one() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let first = t.send_request("test/echo", Some(json!({"a": 1})));
        let second = t.send_request("ping", None);
        assert_eq!((first.id(), second.id()), (1, 2));
        assert_eq!(first.await.unwrap(), json!({"a": 1}));
        assert_eq!(second.await.unwrap(), json!({}));
        // The wire form: jsonrpc 2.0, integer id, params left out when None.
        let lines = received(&t).await;
        assert_eq!(
            lines[0],
            json!({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": {"a": 1}})
        );
        assert_eq!(
            lines[1],
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        );
        t.close().await.unwrap();
    });
}

#[test]
fn id_echoed_as_a_decimal_string_matches() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let r = t.send_request("test/string_id", Some(json!("s"))).await;
        assert_eq!(r.unwrap(), json!("s"));
        t.close().await.unwrap();
    });
}

#[test]
fn null_result_is_success() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let r = t.send_request("test/echo", Some(Value::Null)).await;
        assert_eq!(r.unwrap(), Value::Null);
        t.close().await.unwrap();
    });
}

/// Asks the peer to answer with `response` (with `$ID` for the request's id).
async fn answered_with(t: &stdio_mcp::Transport, response: &str) -> Result<Value, Error> {
    t.send_request("test/raw", Some(json!({ "lines": [response] })))
        .await
}

#[test]
fn every_error_shape_of_the_seed() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();

        let e = answered_with(&t, r#"{"jsonrpc":"2.0","id":$ID,"error":{"code":-32602,"message":"bad args","data":{"supported":["a"]}}}"#).await.unwrap_err();
        assert_eq!(e.to_string(), "MCP error -32602: bad args");
        assert_eq!(e.category(), Some("mcp"));
        assert_eq!(
            e.rpc_error(),
            Some(&RpcError {
                code: -32602,
                message: "bad args".into(),
                data: Some(json!({"supported": ["a"]}))
            })
        );

        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":$ID,"error":"plain words"}"#,
                "MCP stdio error response: plain words",
            ),
            (
                r#"{"jsonrpc":"2.0","id":$ID,"error":42}"#,
                "MCP stdio error response: 42",
            ),
            (
                r#"{"jsonrpc":"2.0","id":$ID,"error":[1,"two"]}"#,
                r#"MCP stdio error response: [1,"two"]"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":$ID,"error":{"message":"no code"}}"#,
                r#"MCP stdio error response: {"message":"no code"}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":$ID,"error":null}"#,
                "MCP stdio invalid response: a null error and no result",
            ),
            (
                r#"{"jsonrpc":"2.0","id":$ID}"#,
                "MCP stdio invalid response: neither a result nor an error",
            ),
        ];
        for (response, expected) in cases {
            let e = answered_with(&t, response).await.unwrap_err();
            assert_eq!(e.to_string(), expected, "for {response}");
            assert_eq!(e.category(), None, "for {response}");
            assert!(e.rpc_error().is_none());
        }

        let ok = answered_with(
            &t,
            r#"{"jsonrpc":"2.0","id":$ID,"error":null,"result":{"fine":true}}"#,
        )
        .await;
        assert_eq!(ok.unwrap(), json!({"fine": true}));
        t.close().await.unwrap();
    });
}

#[test]
fn notifications_arrive_in_wire_order_before_a_later_response() {
    run(10, async {
        let seen: Arc<Mutex<Vec<Notification>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t = peer(&[])
            .on_notification(move |n| log.lock().unwrap().push(n.clone()))
            .spawn()
            .unwrap();
        let r = t
            .send_request("test/notify", Some(json!({"count": 500})))
            .await
            .unwrap();
        assert_eq!(r, json!({"sent": 500}));
        // Every notification was delivered before the response completed the future.
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 500);
        for (i, n) in seen.iter().enumerate() {
            assert_eq!(n.method, "notifications/progress");
            assert_eq!(n.params, Some(json!({"progress": i})));
        }
        t.close().await.unwrap();
    });
}

#[test]
fn notification_without_params_has_none() {
    run(10, async {
        let seen: Arc<Mutex<Vec<Notification>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t = peer(&[])
            .on_notification(move |n| log.lock().unwrap().push(n.clone()))
            .spawn()
            .unwrap();
        let raw = t.send_request(
            "test/raw",
            Some(json!({"lines": [r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#]})),
        );
        // The raw line answers nothing; a follow-up round trip proves it was read.
        t.send_request("ping", None).await.unwrap();
        drop(raw);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![Notification {
                method: "notifications/tools/list_changed".into(),
                params: None
            }]
        );
        t.close().await.unwrap();
    });
}

#[test]
fn server_request_answered_by_the_handler() {
    run(10, async {
        let t = peer(&[])
            .on_request(|r: &ServerRequest| {
                assert_eq!(r.method, "roots/list");
                Some(Ok(json!({"roots": [], "saw": r.params.clone()})))
            })
            .spawn()
            .unwrap();
        let r = t
            .send_request(
                "test/ask",
                Some(json!({"method": "roots/list", "params": {"x": 1}})),
            )
            .await
            .unwrap();
        assert_eq!(r["answer"]["id"], json!("ask-1"));
        assert_eq!(r["answer"]["result"], json!({"roots": [], "saw": {"x": 1}}));
        t.close().await.unwrap();
    });
}

#[test]
fn server_request_refused_by_the_handler_with_an_error() {
    run(10, async {
        let t = peer(&[])
            .on_request(|_| {
                Some(Err(RpcError {
                    code: -32601,
                    message: "nope".into(),
                    data: Some(json!(7)),
                }))
            })
            .spawn()
            .unwrap();
        let r = t
            .send_request(
                "test/ask",
                Some(json!({"method": "sampling/createMessage"})),
            )
            .await
            .unwrap();
        assert_eq!(
            r["answer"]["error"],
            json!({"code": -32601, "message": "nope", "data": 7})
        );
        t.close().await.unwrap();
    });
}

#[test]
fn server_request_answered_later_with_respond() {
    run(10, async {
        let asked: Arc<Mutex<Vec<ServerRequest>>> = Arc::default();
        let log = Arc::clone(&asked);
        let t = peer(&[])
            .on_request(move |r| {
                log.lock().unwrap().push(r.clone());
                None
            })
            .spawn()
            .unwrap();
        let waiting = t.send_request("test/ask", Some(json!({"method": "elicitation/create"})));
        common::eventually(5, || !asked.lock().unwrap().is_empty()).await;
        let request = asked.lock().unwrap()[0].clone();
        assert_eq!(request.id, json!("ask-1"));
        assert_eq!(request.params, None);
        t.respond(request.id, Ok(json!({"action": "accept"})))
            .unwrap();
        let r = waiting.await.unwrap();
        assert_eq!(
            r["answer"],
            json!({"jsonrpc": "2.0", "id": "ask-1", "result": {"action": "accept"}})
        );
        t.close().await.unwrap();
    });
}

#[test]
fn server_request_without_a_handler_is_dropped() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let waiting = t.send_request("test/ask", Some(json!({"method": "roots/list"})));
        // Nothing answers it; the connection keeps working.
        assert_eq!(
            t.send_request("test/echo", Some(json!(1))).await.unwrap(),
            json!(1)
        );
        let lines = received(&t).await;
        assert!(
            lines.iter().all(|l| l.get("id") != Some(&json!("ask-1"))),
            "{lines:?}"
        );
        drop(waiting);
        t.close().await.unwrap();
    });
}

#[test]
fn noise_lines_are_discarded_visibly_and_harm_nothing() {
    run(10, async {
        let discarded: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let log = Arc::clone(&discarded);
        let t = peer(&["--banner"])
            .on_discarded(move |d| {
                log.lock()
                    .unwrap()
                    .push((d.reason.to_owned(), d.line.clone()))
            })
            .spawn()
            .unwrap();
        // A line ending in \r\n is an ordinary message.
        let crlf = t
            .send_request("test/raw_bytes", Some(json!({"bytes": b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"crlf\"}\r\n".to_vec()})))
            .await;
        assert_eq!(crlf.unwrap(), json!("crlf"));
        let noise = t.send_request(
            "test/raw",
            Some(json!({"lines": [
                "",
                "not json at all",
                "{\"jsonrpc\":\"2.0\",\"id\":99999,\"result\":1}",
                "17",
                "{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":\"after the noise\"}"
            ]})),
        );
        assert_eq!(noise.await.unwrap(), json!("after the noise"));
        // Invalid UTF-8, then a real answer.
        let mut bytes = vec![0xff, 0xfe, b'{', b'}', b'\n'];
        bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"utf8 ok\"}\n");
        let bad = t
            .send_request("test/raw_bytes", Some(json!({"bytes": bytes})))
            .await;
        assert_eq!(bad.unwrap(), json!("utf8 ok"));

        let reasons: Vec<String> = discarded
            .lock()
            .unwrap()
            .iter()
            .map(|(r, _)| r.clone())
            .collect();
        assert_eq!(
            reasons,
            [
                "not valid JSON",
                "empty line",
                "not valid JSON",
                "response to an unknown or cancelled id",
                "JSON value that is not a JSON-RPC message",
                "not valid UTF-8"
            ]
        );
        assert_eq!(
            discarded.lock().unwrap()[0].1,
            "stdio-mcp-peer starting (this line is not JSON)"
        );
        assert_eq!(t.discarded_lines(), 6);
        assert!(t.is_alive());
        t.close().await.unwrap();
    });
}

#[test]
fn a_json_array_is_handled_element_by_element() {
    run(10, async {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t = peer(&[])
            .on_notification(move |n| log.lock().unwrap().push(n.method.clone()))
            .spawn()
            .unwrap();
        let other = t.send_request("test/never", None);
        let r = answered_with(
            &t,
            &format!(
                r#"[{{"jsonrpc":"2.0","method":"notifications/one"}},{{"jsonrpc":"2.0","id":{},"result":"second"}},5,{{"jsonrpc":"2.0","id":$ID,"result":"mine"}}]"#,
                other.id()
            ),
        )
        .await;
        assert_eq!(r.unwrap(), json!("mine"));
        assert_eq!(other.await.unwrap(), json!("second"));
        assert_eq!(*seen.lock().unwrap(), ["notifications/one"]);
        assert_eq!(t.discarded_lines(), 1, "the element 5 is no message");
        t.close().await.unwrap();
    });
}

#[test]
fn a_thousand_requests_in_flight_with_random_ones_dropped() {
    run(30, async {
        let t = peer(&[]).spawn().unwrap();
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        let mut kept = Vec::new();
        let mut dropped_ids = Vec::new();
        for i in 0..1000u64 {
            let r = t.send_request("test/sleep", Some(json!({"ms": rng.below(20), "i": i})));
            if rng.below(4) == 0 {
                dropped_ids.push(r.id());
                drop(r);
            } else {
                kept.push((i, r));
            }
        }
        let results =
            futures::future::join_all(kept.into_iter().map(|(i, r)| async move { (i, r.await) }))
                .await;
        for (i, r) in results {
            assert_eq!(r.unwrap()["i"], json!(i));
        }
        // Every dropped request was cancelled on the wire, by id, without a reason.
        let lines = received(&t).await;
        let mut cancelled: Vec<u64> = cancels(&lines)
            .iter()
            .map(|c| {
                assert!(c["params"].get("reason").is_none());
                c["params"]["requestId"].as_u64().unwrap()
            })
            .collect();
        cancelled.sort_unstable();
        assert_eq!(cancelled, dropped_ids);
        // Late answers to the dropped ones were discarded, not delivered anywhere.
        common::eventually(5, || t.discarded_lines() == dropped_ids.len() as u64).await;
        t.close().await.unwrap();
    });
}

#[test]
fn resolve_on_notification_is_refused_at_once() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let r = t.send_request_with(
            "subscriptions/listen",
            None,
            RequestOptions::new().resolve_on_notification("notifications/subscribed"),
        );
        assert_eq!(r.id(), 0);
        let e = r.await.unwrap_err();
        assert!(matches!(e, Error::ResolveOnNotification { .. }));
        assert!(
            e.to_string()
                .contains("cannot settle a request from a notification"),
            "{e}"
        );
        assert_eq!(e.category(), None);
        // Nothing was written for it.
        let lines = received(&t).await;
        assert!(lines.is_empty(), "{lines:?}");
        t.close().await.unwrap();
    });
}

#[test]
fn header_params_are_accepted_and_ignored() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        assert!(!t.mirrors_header_params());
        let r = t
            .send_request_with(
                "test/echo",
                Some(json!(3)),
                RequestOptions::new().header_params(json!({"x": 1})),
            )
            .await;
        assert_eq!(r.unwrap(), json!(3));
        // Nothing of the header params reaches the wire.
        let lines = received(&t).await;
        assert_eq!(
            lines[0],
            json!({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": 3})
        );
        t.close().await.unwrap();
    });
}

#[test]
fn notifications_to_the_server_are_written_in_call_order() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        t.send_notification("notifications/initialized", None)
            .unwrap();
        t.send_notification("notifications/roots/list_changed", Some(json!({"n": 1})))
            .unwrap();
        let lines = received(&t).await;
        assert_eq!(
            lines,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"n": 1}})
            ]
        );
        t.close().await.unwrap();
    });
}

#[test]
fn handler_panic_is_contained() {
    run(10, async {
        let t = peer(&[])
            .on_notification(|_| panic!("a careless handler"))
            .spawn()
            .unwrap();
        let r = t
            .send_request("test/notify", Some(json!({"count": 3})))
            .await;
        assert_eq!(r.unwrap(), json!({"sent": 3}));
        assert!(t.is_alive());
        t.close().await.unwrap();
    });
}

#[test]
fn lines_from_many_threads_are_never_interleaved() {
    run(30, async {
        let t = peer(&[]).spawn().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let t = t.clone();
                std::thread::spawn(move || {
                    let requests: Vec<_> = (0..100)
                        .map(|i| {
                            let payload = format!("{thread}-{i}-{}", "p".repeat(10_000));
                            (
                                payload.clone(),
                                t.send_request("test/echo", Some(json!(payload))),
                            )
                        })
                        .collect();
                    // Bounded here too: a join on a hung thread would never end.
                    common::run(20, async {
                        for (payload, r) in requests {
                            assert_eq!(r.await.unwrap(), json!(payload));
                        }
                    });
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(t.discarded_lines(), 0);
        t.close().await.unwrap();
    });
}

#[test]
fn public_types_are_send_sync_and_debug() {
    fn send_sync<T: Send + Sync + std::fmt::Debug>() {}
    fn send_static<T: Send + 'static + std::fmt::Debug>() {}
    send_sync::<stdio_mcp::Transport>();
    send_sync::<stdio_mcp::Error>();
    send_static::<stdio_mcp::PendingRequest>();
    send_static::<stdio_mcp::Driver>();
    send_static::<stdio_mcp::Close>();
    send_static::<stdio_mcp::TransportBuilder>();
}

/// Linux: a child's stdin pipe that is found full grows (once, to 256 KiB) so a
/// window of pipelined requests fits; one that never fills keeps the default.
/// Whatever the pipe's size, every request arrives whole and in order. Both on
/// the background thread and with the driver on the caller's executor.
/// (Not in the portable build, which stands for platforms that cannot do it.)
#[cfg(all(target_os = "linux", not(stdio_mcp_portable)))]
#[test]
fn a_full_stdin_pipe_grows_once_and_loses_nothing() {
    const DEFAULT: u64 = 64 * 1024;
    const GROWN: u64 = 256 * 1024;
    async fn pipe_size(t: &stdio_mcp::Transport) -> u64 {
        let size = t.send_request("test/stdin_pipe_size", None).await.unwrap();
        size.as_u64().expect("a size")
    }
    async fn scenario(t: stdio_mcp::Transport) {
        // Requests that the child keeps up with leave the pipe as it was.
        for i in 0..50 {
            assert_eq!(
                t.send_request("test/echo", Some(json!(i))).await.unwrap(),
                json!(i)
            );
        }
        assert_eq!(pipe_size(&t).await, DEFAULT);
        // 600 KB behind a pause, while the child does not read: the pipe fills.
        let pause = t.send_request("test/pause", Some(json!({ "ms": 300 })));
        let sent: Vec<_> = (0..300)
            .map(|i| {
                let payload = format!("{i}-{}", "p".repeat(2_000));
                (
                    payload.clone(),
                    t.send_request("test/echo", Some(json!(payload))),
                )
            })
            .collect();
        pause.await.unwrap();
        for (payload, answer) in sent {
            assert_eq!(answer.await.unwrap(), json!(payload));
        }
        assert_eq!(pipe_size(&t).await, GROWN);
        assert_eq!(t.discarded_lines(), 0);
        t.close().await.unwrap();
    }
    run(20, scenario(peer(&[]).spawn().unwrap()));
    smol::block_on(common::within(20, async {
        let (t, driver) = peer(&[]).spawn_with_driver().unwrap();
        smol::spawn(driver).detach();
        scenario(t).await;
    }));
}

/// On the background thread a caller writes its own line when nothing else is
/// in flight. A line larger than the pipe takes at once is finished by the
/// driver, and what is sent next (a notification, a request) comes after it,
/// whole and in order.
#[test]
fn a_line_the_pipe_takes_in_part_is_finished_before_what_follows() {
    run(30, async {
        let t = peer(&[]).spawn().unwrap();
        for round in 0..8 {
            let payload = format!("{round}-{}", "q".repeat(300 * 1024));
            let big = t.send_request("test/echo", Some(json!(payload)));
            t.send_notification(
                "notifications/roots/list_changed",
                Some(json!({"round": round})),
            )
            .unwrap();
            let small = t.send_request("test/echo", Some(json!(round)));
            assert_eq!(big.await.unwrap(), json!(payload));
            assert_eq!(small.await.unwrap(), json!(round));
            // Alone in flight: written by the caller, then by the driver.
            assert_eq!(
                t.send_request("test/echo", Some(json!(payload)))
                    .await
                    .unwrap(),
                json!(payload)
            );
        }
        let lines = received(&t).await;
        let seen: Vec<(String, Value)> = lines
            .iter()
            .map(|l| {
                (
                    l["method"].as_str().unwrap_or("?").to_owned(),
                    l["id"].clone(),
                )
            })
            .collect();
        let mut expected = Vec::new();
        for round in 0..8u64 {
            expected.push(("test/echo".to_owned(), json!(round * 3 + 1)));
            expected.push(("notifications/roots/list_changed".to_owned(), Value::Null));
            expected.push(("test/echo".to_owned(), json!(round * 3 + 2)));
            expected.push(("test/echo".to_owned(), json!(round * 3 + 3)));
        }
        assert_eq!(seen, expected);
        assert_eq!(t.discarded_lines(), 0);
        t.close().await.unwrap();
    });
}
