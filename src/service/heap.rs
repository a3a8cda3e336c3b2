//! The process's heap: the allocator the `shuangkou` binary installs ([`Allocator`], jemalloc)
//! and the one call that gives freed memory back to the OS after a burst ([`give_back_free_heap`],
//! after the recovery of unfinished games).
//!
//! Why jemalloc: in the closed loop of the load generator, glibc's malloc costs about a quarter of
//! the server's CPU per play (BENCHMARKS.md, "The load generator before and after"); jemalloc's
//! thread caches and size classes serve the many small, short-lived allocations of a play (the
//! request, the events, the reply) with less work and keep a smaller resident set per game (an
//! open WatchGame stream holds ≈ 50 KiB more than on glibc: BENCHMARKS.md, "Long matches").

/// The global allocator of the `shuangkou` binary (`src/main.rs` installs it). Test binaries and
/// examples keep the system allocator or their own counting one.
#[cfg(not(target_env = "msvc"))]
pub type Allocator = tikv_jemallocator::Jemalloc;

/// The global allocator where jemalloc does not build.
#[cfg(target_env = "msvc")]
pub type Allocator = std::alloc::System;

/// The allocator value `src/main.rs` installs with `#[global_allocator]`.
#[cfg(not(target_env = "msvc"))]
pub const ALLOCATOR: Allocator = tikv_jemallocator::Jemalloc;

/// The allocator value `src/main.rs` installs with `#[global_allocator]`.
#[cfg(target_env = "msvc")]
pub const ALLOCATOR: Allocator = std::alloc::System;

/// Asks both allocators a process may use to return their free pages to the OS: jemalloc purges
/// the unused dirty pages of every arena (without this they decay over ten seconds, and only while
/// the process allocates), and glibc trims every arena (`malloc_trim(0)`; what the system
/// allocator holds: tests, C libraries). True if either gave something back.
pub fn give_back_free_heap() -> bool {
    let purged = purge_jemalloc();
    let trimmed = trim_glibc();
    purged || trimmed
}

/// jemalloc's `arena.<MALLCTL_ARENAS_ALL>.purge`: true if it ran (jemalloc answers for every
/// arena; when jemalloc is not the global allocator its arenas are empty and nothing is freed).
#[cfg(not(target_env = "msvc"))]
pub fn purge_jemalloc() -> bool {
    /// jemalloc's `MALLCTL_ARENAS_ALL`: the pseudo-arena index meaning every arena.
    const PURGE_ALL: &std::ffi::CStr = c"arena.4096.purge";
    // SAFETY: a "void" mallctl (no old value, no new value): every pointer is null and the name
    // is a NUL-terminated string that outlives the call.
    let status = unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    status == 0
}

#[cfg(target_env = "msvc")]
pub fn purge_jemalloc() -> bool {
    false
}

/// glibc's `malloc_trim(0)` (the whole heap, not only its top): true if it gave some back.
/// Elsewhere (another C library or OS) nothing is done.
pub fn trim_glibc() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` takes no pointer and only releases pages glibc's allocator
        // holds free; it is thread-safe (each arena is locked while it is trimmed).
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::trim_glibc;

    #[test]
    fn freed_heap_behind_a_live_block_is_given_back() {
        // 16 MiB of small blocks, then one kept after them: once the blocks are freed their pages
        // lie under the kept one, where `free` cannot shrink the heap and only a trim returns them.
        let blocks: Vec<Vec<u8>> = (0..4096).map(|i| vec![i as u8; 4096]).collect();
        let kept = Box::new([1u8; 64]);
        drop(blocks);
        assert!(trim_glibc(), "no free page was given back");
        assert_eq!(kept[0], 1);
    }
}
