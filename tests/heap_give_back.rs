//! The `shuangkou` binary's allocator (jemalloc, `service::heap`) gives the pages of freed blocks
//! back to the OS when asked: recovery relies on it for a resident set after a restart no larger
//! than before. This test binary installs the same allocator as the server.

#![cfg(all(target_os = "linux", not(target_env = "msvc")))]

use shuangkou::service::heap::{ALLOCATOR, Allocator, give_back_free_heap};

#[global_allocator]
static GLOBAL: Allocator = ALLOCATOR;

const MIB: u64 = 1 << 20;

/// The process's resident set (`VmRSS` of `/proc/self/status`, in kB there).
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in kB");
    kb * 1024
}

#[test]
fn freed_small_blocks_leave_the_resident_set_when_the_heap_is_given_back() {
    // 32 MiB of small blocks, each written (so resident), then one block kept.
    let blocks: Vec<Vec<u8>> = (0..32 * 1024).map(|i| vec![i as u8; 1024]).collect();
    let kept = Box::new([1u8; 64]);
    let filled = resident_bytes();
    drop(blocks);
    // jemalloc keeps the freed pages dirty (they decay over seconds, and only as it allocates).
    let freed = resident_bytes();
    assert!(give_back_free_heap(), "the purge did not run");
    let given_back = resident_bytes();
    assert!(
        freed.saturating_sub(given_back) >= 16 * MIB,
        "resident set: {} MiB filled, {} MiB after the free, {} MiB after giving back",
        filled / MIB,
        freed / MIB,
        given_back / MIB
    );
    assert_eq!(kept[0], 1);
}
