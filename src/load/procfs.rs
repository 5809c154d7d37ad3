//! What the load tool reads from Linux about processes on this machine: a process's
//! resident memory and CPU time, which process listens on a port, the ephemeral port
//! range; and the one thing it changes: its own open-file limit.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A process's memory and CPU at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcSample {
    /// Resident set size, bytes.
    pub rss_bytes: u64,
    /// User plus system CPU time so far, seconds.
    pub cpu_secs: f64,
    /// Threads.
    pub threads: u64,
}

/// Reads `/proc/PID/status` and `/proc/PID/stat`; None when the process is gone.
pub fn sample(pid: u32) -> Option<ProcSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    };
    let rss_kib = field("VmRSS:")?;
    let threads = field("Threads:").unwrap_or(0);
    Some(ProcSample {
        rss_bytes: rss_kib * 1024,
        cpu_secs: cpu_secs(&format!("/proc/{pid}/stat"))?,
        threads,
    })
}

/// User plus system CPU seconds of this process (all its threads).
pub fn own_cpu_secs() -> f64 {
    cpu_secs("/proc/self/stat").unwrap_or(0.0)
}

fn cpu_secs(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf only reads a constant of the running system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = if ticks > 0 { ticks as f64 } else { 100.0 };
    Some((utime + stime) as f64 / ticks)
}

/// The process that holds a socket listening on TCP `port` (IPv4 or IPv6), found through
/// `/proc/net/tcp*` and the processes' open descriptors. None when not found or not
/// visible to this user.
pub fn listener_pid(port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is HEXIP:HEXPORT; st 0A is LISTEN; the inode is field 10.
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let listening_port = local
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if *state == "0A" && listening_port == Some(port) {
                inodes.push(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let target = std::fs::read_link(fd.path());
            if target.is_ok_and(|t| inodes.iter().any(|i| Path::new(i) == t)) {
                return Some(pid);
            }
        }
    }
    None
}

/// How many local ports one source address can use to reach one server address.
pub fn ephemeral_ports() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| {
            let mut it = t.split_whitespace().map(|n| n.parse::<u32>().ok());
            let (lo, hi) = (it.next()??, it.next()??);
            (hi >= lo).then(|| hi - lo + 1)
        })
        .unwrap_or(28_232)
}

/// Raises this process's soft open-file limit to the hard limit; returns the limit now
/// in force.
pub fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    lim.rlim_cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_visible() {
        let s = sample(std::process::id()).expect("own /proc entry");
        assert!(s.rss_bytes > 0);
        assert!(s.threads >= 1);
        assert!(raise_nofile_limit() >= 1024);
        assert!(ephemeral_ports() > 1000);
    }

    #[test]
    fn the_listener_of_a_port_is_found() {
        // A listener in this very process is skipped on purpose (the tool looks for a
        // server elsewhere), so this only checks that an unused port finds nobody.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(listener_pid(port), None);
    }
}
