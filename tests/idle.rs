//! The background thread, asleep in async-io's reactor with nothing to drive,
//! takes new transports again, and their timeouts (async-io timers) still fire.
//! Alone in its own binary so no other test keeps the thread busy.

mod common;

use std::fs;
use std::time::Duration;

use common::{peer, run};
use serde_json::json;

fn threads() -> usize {
    fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn an_idle_background_thread_takes_new_transports_again() {
    run(30, async {
        let mut thread_count = None;
        for round in 0..3 {
            let t = peer(&[]).spawn().unwrap();
            assert_eq!(
                t.send_request("test/echo", Some(json!(round)))
                    .await
                    .unwrap(),
                json!(round)
            );
            // A second transport while the first is alive, and a request timeout,
            // both served by the re-entered loop.
            let u = peer(&[])
                .timeout(Duration::from_millis(200))
                .spawn()
                .unwrap();
            assert_eq!(u.send_request("ping", None).await.unwrap(), json!({}));
            assert_eq!(
                u.send_request("test/sleep", Some(json!({ "ms": 5000 })))
                    .await
                    .unwrap_err()
                    .category(),
                Some("timeout")
            );
            t.close().await.unwrap();
            u.close().await.unwrap();
            // Idle for a while with no driver left.
            async_io::Timer::after(Duration::from_millis(300)).await;
            // Sleeping and waking again starts no thread.
            assert_eq!(*thread_count.get_or_insert(threads()), threads());
        }
    });
}
