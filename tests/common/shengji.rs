//! The `shengji.v1` (升級) service's calls shared by its socket tests (`shengji_service`,
//! `shengji_timers`, `service_shengji_streams`): a client and the creation of one game.

use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use tonic::transport::Channel;

use super::{ADMIN_KEY, authed, game_seed};

/// A client of the 升級 service.
pub type ShengjiClient = ShengjiEngineClient<Channel>;

/// Creates a 升級 game with the admin key, the seed `seed` and the variant `options`.
pub async fn create_shengji(
    c: &mut ShengjiClient,
    seed: u64,
    options: &[(&str, &str)],
) -> pb::CreateGameResponse {
    let req = pb::CreateGameRequest {
        seed: game_seed(seed),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    };
    c.create_game(authed(req, ADMIN_KEY))
        .await
        .expect("create")
        .into_inner()
}
