//! CPU time of the server and of the load generator itself, read from `/proc`: unlike
//! throughput, it does not depend on what else the machine is running.

/// CPU time (user + system) of a process so far, in microseconds, from `/proc/<pid>/stat`
/// (clock ticks of 10 ms, the Linux default).
fn cpu_us(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10_000)
}

/// CPU of the server (if known) and of this process, in µs.
#[derive(Clone, Copy, Default)]
pub struct Cpu {
    pub server: u64,
    pub client: u64,
}

pub fn cpu_now(server_pid: Option<u32>) -> Cpu {
    Cpu {
        server: server_pid.and_then(|p| cpu_us(&p.to_string())).unwrap_or(0),
        client: cpu_us("self").unwrap_or(0),
    }
}

impl Cpu {
    pub fn since(self, start: Cpu) -> Cpu {
        Cpu {
            server: self.server.saturating_sub(start.server),
            client: self.client.saturating_sub(start.client),
        }
    }
    pub fn add(self, o: Cpu) -> Cpu {
        Cpu {
            server: self.server + o.server,
            client: self.client + o.client,
        }
    }
}
