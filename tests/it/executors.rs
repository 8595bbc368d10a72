//! The core scenarios under every executor we promise: smol, async-std, Tokio
//! (multi-thread and current-thread), async-compat and `futures::executor`, each
//! with the default background thread and with the driver on the executor itself.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{cancels, peer, received, within};
use serde_json::json;
use stdio_mcp::{RequestOptions, Transport, TransportBuilder};

/// Request/response, notifications, cancel by drop, timeout, close, and exit.
async fn core_scenarios(spawn: impl Fn(TransportBuilder) -> Transport) {
    within(20, async {
        let notes = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&notes);
        let t = spawn(peer(&[]).on_notification(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }));

        assert_eq!(
            t.send_request("test/echo", Some(json!({"k": "v"})))
                .await
                .unwrap(),
            json!({"k": "v"})
        );

        let r = t
            .send_request("test/notify", Some(json!({"count": 50})))
            .await
            .unwrap();
        assert_eq!(r, json!({"sent": 50}));
        assert_eq!(
            notes.load(Ordering::SeqCst),
            50,
            "all notifications before the response"
        );

        let dropped = t.send_request("test/never", None);
        let id = dropped.id();
        drop(dropped);
        let lines = received(&t).await;
        assert_eq!(cancels(&lines).len(), 1);
        assert_eq!(cancels(&lines)[0]["params"], json!({"requestId": id}));

        let e = t
            .send_request_with(
                "test/never",
                None,
                RequestOptions::new().timeout(Duration::from_millis(50)),
            )
            .await
            .unwrap_err();
        assert_eq!(e.category(), Some("timeout"));

        let waiting = t.send_request("test/never", None);
        t.close().await.unwrap();
        assert_eq!(
            waiting.await.unwrap_err().to_string(),
            "MCP server process exited (code 0)"
        );
        assert!(!t.is_alive());

        let t = spawn(peer(&[]));
        let e = t
            .send_request("test/exit", Some(json!({"code": 7, "stderr": ["bye"]})))
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "MCP server process exited (code 7): bye");
    })
    .await;
}

fn on_background(builder: TransportBuilder) -> Transport {
    builder.spawn().unwrap()
}

#[test]
fn futures_block_on_with_the_background_thread() {
    futures::executor::block_on(core_scenarios(on_background));
}

#[test]
fn futures_local_pool_running_the_driver() {
    use futures::task::LocalSpawnExt;
    let mut pool = futures::executor::LocalPool::new();
    let spawner = pool.spawner();
    pool.run_until(core_scenarios(move |b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        spawner.spawn_local(driver).unwrap();
        t
    }));
}

#[test]
fn smol_with_the_background_thread() {
    smol::block_on(core_scenarios(on_background));
}

#[test]
fn smol_running_the_driver() {
    smol::block_on(core_scenarios(|b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        smol::spawn(driver).detach();
        t
    }));
}

#[test]
fn smol_local_executor_running_the_driver() {
    let ex = std::rc::Rc::new(smol::LocalExecutor::new());
    let spawner = std::rc::Rc::clone(&ex);
    smol::block_on(ex.run(core_scenarios(move |b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        spawner.spawn(driver).detach();
        t
    })));
}

#[async_std::test]
async fn async_std_with_the_background_thread() {
    core_scenarios(on_background).await;
}

#[async_std::test]
async fn async_std_running_the_driver() {
    core_scenarios(|b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        async_std::task::spawn(driver);
        t
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_multi_thread_with_the_background_thread() {
    core_scenarios(on_background).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_multi_thread_running_the_driver() {
    core_scenarios(|b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        tokio::spawn(driver);
        t
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn tokio_current_thread_with_the_background_thread() {
    core_scenarios(on_background).await;
}

#[tokio::test(flavor = "current_thread")]
async fn tokio_current_thread_running_the_driver() {
    core_scenarios(|b| {
        let (t, driver) = b.spawn_with_driver().unwrap();
        tokio::spawn(driver);
        t
    })
    .await;
}

/// Tokio-only code (its timer) and this crate in one future, run by smol through async-compat.
#[test]
fn tokio_code_beside_the_transport_through_async_compat() {
    smol::block_on(async_compat::Compat::new(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        core_scenarios(on_background).await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }));
}

/// The driver and the work in one task, under a bare `block_on` (futures' and async-io's).
async fn same_task_scenario() {
    let notes = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&notes);
    let (t, driver) = peer(&[])
        .on_notification(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .spawn_with_driver()
        .unwrap();
    let work = async {
        assert_eq!(
            t.send_request("test/echo", Some(json!(5))).await.unwrap(),
            json!(5)
        );
        let r = t
            .send_request("test/notify", Some(json!({"count": 20})))
            .await
            .unwrap();
        assert_eq!(r, json!({"sent": 20}));
        assert_eq!(notes.load(Ordering::SeqCst), 20);
        let dropped = t.send_request("test/never", None);
        let id = dropped.id();
        drop(dropped);
        let lines = received(&t).await;
        assert_eq!(cancels(&lines)[0]["params"], json!({"requestId": id}));
        let e = t
            .send_request_with(
                "test/never",
                None,
                RequestOptions::new().timeout(Duration::from_millis(30)),
            )
            .await
            .unwrap_err();
        assert_eq!(e.category(), Some("timeout"));
        // Handed out still waiting, to see the close settle it.
        Some(t.send_request("test/never", None))
    };
    let (waiting, driver) = within(10, driver.run_until(work)).await;
    // The driver still owns the child: it sees the close through.
    let closing = t.close();
    within(10, async {
        driver.await;
        closing.await.unwrap();
    })
    .await;
    assert_eq!(
        waiting.unwrap().await.unwrap_err().to_string(),
        "MCP server process exited (code 0)"
    );
    assert_eq!(t.exit_status().unwrap().code(), Some(0));
}

#[test]
fn futures_block_on_running_driver_and_work_in_one_task() {
    futures::executor::block_on(same_task_scenario());
}

#[test]
fn async_io_block_on_running_driver_and_work_in_one_task() {
    async_io::block_on(same_task_scenario());
}

#[test]
fn dropping_the_driver_after_run_until_kills_the_child() {
    futures::executor::block_on(within(10, async {
        let (t, driver) = peer(&["--ignore-eof"]).spawn_with_driver().unwrap();
        let (pong, driver) = driver.run_until(t.send_request("ping", None)).await;
        assert_eq!(pong.unwrap(), json!({}));
        let pid = t.pid();
        drop(driver);
        assert!(!t.is_alive());
        common::eventually(5, || !common::process_exists(pid)).await;
    }));
}

/// Wake-ups from other threads (timers fired by async-io's thread) while the
/// driver and the work share a task: none may be lost.
#[test]
fn run_until_loses_no_wake_up_from_other_threads() {
    futures::executor::block_on(within(20, async {
        let (t, driver) = peer(&[]).spawn_with_driver().unwrap();
        let work = async {
            for i in 0..300u64 {
                let sleep = async_io::Timer::after(Duration::from_micros(50 + i % 7 * 30));
                let request = t.send_request("test/sleep", Some(json!({"ms": i % 3})));
                let (_, answer) = futures::join!(sleep, request);
                assert_eq!(answer.unwrap()["ms"], json!(i % 3));
            }
        };
        let ((), driver) = driver.run_until(work).await;
        let closing = t.close();
        driver.await;
        closing.await.unwrap();
    }));
}
