//! The in-memory store against the store contract (`tests/store_contract/`).

#[macro_use]
mod store_contract;

use std::sync::Arc;

use shuangkou::store::Store;
use store_contract::Fixture;

struct Memory(Arc<Store>);

impl Fixture for Memory {
    async fn start(_name: &str) -> Option<Self> {
        Some(Memory(Arc::new(Store::open("memory").await.unwrap())))
    }
    fn store(&self) -> &Arc<Store> {
        &self.0
    }
}

store_contract!(Memory);
