//! The variants ConfigMap of `deploy/` on the real binary: the variants directory is laid out as
//! the kubelet lays out a mounted ConfigMap (`..data` → a timestamped directory, one symlink per
//! key), and updated as the kubelet updates it (an atomic rename of `..data`).
//!
//! - a new version activates without a restart, and games already running stay pinned to the
//!   version they started with (and keep playing);
//! - a broken version is refused while the previous one keeps serving new games, and the admin
//!   service reports the error;
//! - rolling back (publishing the old script again) activates it again.

pub mod deploy_support;

use std::time::{Duration, Instant};

use deploy_support::{
    ConfigMapDir, Game, Server, authed, create_game, repo_variant, state_req, temp_dir, turn,
};
use shuangkou::service::pb;
use shuangkou::service::pb::variant_admin_client::VariantAdminClient;
use shuangkou::variants::content_hash;

/// How long a new version may take to pass its checks and become active.
const ACTIVATION: Duration = Duration::from_secs(120);

/// Polls ListVariants until `id` is at `version`.
async fn wait_version(server: &Server, game: &mut Game, id: &str, version: &str) {
    let start = Instant::now();
    loop {
        let now = deploy_support::active_version(game, id).await;
        if now.as_deref() == Some(version) {
            eprintln!("{id} {} active after {:?}", &version[..12], start.elapsed());
            return;
        }
        assert!(
            start.elapsed() < ACTIVATION,
            "{id} did not become {version} within {ACTIVATION:?} (still {now:?}):\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The variant version `token`'s game is pinned to.
async fn pinned_version(game: &mut Game, game_id: &str, token: &str) -> String {
    game.get_state(authed(token, state_req(game_id)))
        .await
        .expect("GetState")
        .into_inner()
        .variant_version
}

/// The seat to act in `created` plays its first hint; returns the new seq.
async fn play_first_hint(game: &mut Game, created: &pb::CreateGameResponse) -> u64 {
    let (state, player, hints) = turn(game, created).await;
    let token = &created.seat_tokens[player as usize];
    let first = hints.plays.first().expect("a legal play");
    game.submit_play(authed(
        token,
        pb::SubmitPlayRequest {
            game_id: created.game_id.clone(),
            seat: Some(player),
            cards: first.cards.clone(),
            expected_seq: Some(state.seq),
            request_id: format!("deploy-test-{}", state.seq),
            ..Default::default()
        },
    ))
    .await
    .expect("SubmitPlay with the pinned version")
    .into_inner()
    .seq
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_update_hot_reloads_pins_running_games_and_refuses_broken_versions() {
    let classic_v1 = repo_variant("classic");
    let erren = repo_variant("erren");
    let classic_v2 = format!("{classic_v1}\n// deploy test: revision 2 of the ConfigMap\n");
    let broken = "// deploy test: a broken revision\nfn meta() {\n    #{ id: \"classic\",\n";
    let (h1, h2) = (content_hash(&classic_v1), content_hash(&classic_v2));
    let erren_hash = content_hash(&erren);

    let mut cm = ConfigMapDir::new(temp_dir("configmap"));
    cm.publish(&[("classic.rhai", &classic_v1), ("erren.rhai", &erren)]);
    let dir = cm.dir.to_str().expect("utf-8 path").to_string();
    let metrics_addr = format!("127.0.0.1:{}", deploy_support::free_port());
    let mut server = Server::start(&["--variants-dir", &dir, "--metrics-listen", &metrics_addr]);
    let channel = server.ready(Duration::from_secs(120)).await;
    let mut game = Game::new(channel.clone());
    let mut admin = VariantAdminClient::new(channel);

    // Revision 1 is what the server loaded at start.
    assert_eq!(
        deploy_support::active_version(&mut game, "classic")
            .await
            .as_deref(),
        Some(h1.as_str())
    );
    let old_game = create_game(&mut game, "classic", 4).await;
    assert_eq!(old_game.variant_version, h1);

    // Revision 2: the kubelet swaps `..data`; the server activates it without a restart.
    cm.publish(&[("classic.rhai", &classic_v2), ("erren.rhai", &erren)]);
    wait_version(&server, &mut game, "classic", &h2).await;
    assert_eq!(
        deploy_support::active_version(&mut game, "erren")
            .await
            .as_deref(),
        Some(erren_hash.as_str()),
        "an unchanged key keeps its version"
    );
    let new_game = create_game(&mut game, "classic", 4).await;
    assert_eq!(
        new_game.variant_version, h2,
        "new games pin the new version"
    );
    // The game created before the update stays pinned to revision 1, and keeps playing.
    assert_eq!(
        pinned_version(&mut game, &old_game.game_id, &old_game.seat_tokens[0]).await,
        h1
    );
    assert_eq!(play_first_hint(&mut game, &old_game).await, 1);
    assert_eq!(play_first_hint(&mut game, &new_game).await, 1);

    // Revision 3 is broken: refused, revision 2 keeps serving.
    cm.publish(&[("classic.rhai", broken), ("erren.rhai", &erren)]);
    // An explicit reload serializes with the watcher's: once it returns, the broken file has
    // been considered, by one or the other.
    let reload = admin
        .reload_variants(pb::ReloadVariantsRequest {})
        .await
        .expect("ReloadVariants")
        .into_inner();
    assert!(
        !reload
            .outcomes
            .iter()
            .any(|o| o.id == "classic" && o.result == "activated"),
        "the broken version must not activate: {reload:?}"
    );
    let reported_by_reload = reload
        .outcomes
        .iter()
        .any(|o| o.result == "rejected" && o.file.contains("classic") && !o.error.is_empty());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !reported_by_reload && !server.log().contains("refused") {
        assert!(
            Instant::now() < deadline,
            "the broken revision was neither reported by ReloadVariants ({reload:?}) nor logged \
             as refused:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Give the watcher's debounce time to run too, then check nothing changed.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        deploy_support::active_version(&mut game, "classic")
            .await
            .as_deref(),
        Some(h2.as_str()),
        "the previous version keeps serving:\n{}",
        server.log()
    );
    let during_broken = create_game(&mut game, "classic", 4).await;
    assert_eq!(during_broken.variant_version, h2);
    // ValidateVariant (what an operator runs before editing the ConfigMap) names the error.
    let check = admin
        .validate_variant(pb::ValidateVariantRequest {
            source: broken.to_string(),
            file_name: "classic.rhai".to_string(),
        })
        .await
        .expect("ValidateVariant")
        .into_inner();
    assert!(!check.ok, "{check:?}");
    assert!(
        check.errors.iter().any(|e| e.contains("classic.rhai")),
        "the error names the file: {check:?}"
    );

    // Roll back: publish revision 1 again.
    cm.publish(&[("classic.rhai", &classic_v1), ("erren.rhai", &erren)]);
    wait_version(&server, &mut game, "classic", &h1).await;
    assert_eq!(
        pinned_version(&mut game, &new_game.game_id, &new_game.seat_tokens[0]).await,
        h2,
        "a roll-back does not move running games either"
    );

    // No restart happened: the same process answered everything.
    assert!(server.try_exit().is_none(), "the server restarted");

    // What the alerts read: reload outcomes (start: 2 activated; revision 2 and the roll-back:
    // 2 more; the broken revision: refused at least once, by the watcher or the reload rpc)
    // and the script calls of the games created (a seating call at each deal start).
    let text = deploy_support::scrape(&metrics_addr);
    let reloads = |result| {
        deploy_support::metric_sum(
            &text,
            "shuangkou_variant_reloads_total",
            &[("result", result)],
        )
    };
    assert!(
        reloads("activated") >= 4.0,
        "activations: {}\n{text}",
        reloads("activated")
    );
    assert!(
        reloads("rejected") >= 1.0,
        "refusals: {}\n{text}",
        reloads("rejected")
    );
    let seatings = deploy_support::metric_sum(
        &text,
        "shuangkou_script_calls_total",
        &[("variant", "classic"), ("hook", "seating")],
    );
    assert!(
        seatings >= 3.0,
        "seating calls of the 3 classic games: {seatings}\n{text}"
    );
    assert_eq!(
        deploy_support::metric_sum(&text, "shuangkou_script_errors_total", &[]),
        0.0,
        "no hook call failed"
    );
    server.stop().await;
    let _ = std::fs::remove_dir_all(&cm.dir);
}
