//! Key and channel names under the store's prefix.

/// Key names.
#[derive(Clone)]
pub(super) struct Keys {
    pub(super) prefix: String,
}

impl Keys {
    pub(super) fn game(&self, id: &str) -> String {
        format!("{}game:{id}", self.prefix)
    }
    pub(super) fn log(&self, id: &str) -> String {
        format!("{}log:{id}", self.prefix)
    }
    pub(super) fn script(&self, hash: &str) -> String {
        format!("{}script:{hash}", self.prefix)
    }
    pub(super) fn unfinished(&self) -> String {
        format!("{}unfinished", self.prefix)
    }
    pub(super) fn events_prefix(&self) -> String {
        format!("{}events:", self.prefix)
    }
    pub(super) fn events(&self, id: &str) -> String {
        format!("{}events:{id}", self.prefix)
    }
    pub(super) fn request(&self, platform: Option<&str>, request_id: &str) -> String {
        match platform {
            Some(p) => format!("{}req:{}:{p}:{request_id}", self.prefix, p.len()),
            None => format!("{}req:-:{request_id}", self.prefix),
        }
    }
}
