//! The monitor records of `monitor=y`: the MONITOR DUMP snapshot and the live WAIT / WAITED lines, in the
//! layout the original HPROF printed (monitor=y is text-only: the binary format has no monitor records).

use std::io::{self, Write};

/// What a thread was doing when the dump was taken: the part of HPROF's status code after the prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// `ZO`: the thread has ended (a "zombie").
    Terminated,
    /// `NS`: not started yet.
    NotStarted,
    /// `SL`: in Thread.sleep.
    Sleeping,
    /// `MW`: blocked entering a monitor.
    MonitorWait,
    /// `CW`: waiting on a condition (Object.wait, LockSupport.park, join).
    ConditionWait,
    /// `R`: runnable.
    Runnable,
    /// `UN`: alive but none of the above.
    Unknown,
}

/// A thread's status as MONITOR DUMP prints it, e.g. `S|native|R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadStatus {
    pub suspended: bool,
    pub interrupted: bool,
    pub in_native: bool,
    pub state: RunState,
}

impl ThreadStatus {
    /// A thread that has ended, with no other flags.
    pub const TERMINATED: ThreadStatus =
        ThreadStatus { suspended: false, interrupted: false, in_native: false, state: RunState::Terminated };

    /// HPROF's code: optional `S|`, `intr|`, `native|` prefixes, then ZO, NS, SL, MW, CW, R or UN.
    pub fn code(&self) -> String {
        let mut s = String::new();
        if self.suspended {
            s.push_str("S|");
        }
        if self.interrupted {
            s.push_str("intr|");
        }
        if self.in_native {
            s.push_str("native|");
        }
        s.push_str(match self.state {
            RunState::Terminated => "ZO",
            RunState::NotStarted => "NS",
            RunState::Sleeping => "SL",
            RunState::MonitorWait => "MW",
            RunState::ConditionWait => "CW",
            RunState::Runnable => "R",
            RunState::Unknown => "UN",
        });
        s
    }
}

/// One thread of a MONITOR DUMP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpedThread {
    pub serial: u32,
    /// 300000 when no stack was recorded (the thread has ended).
    pub trace_serial: u32,
    pub status: ThreadStatus,
}

/// One monitor of a MONITOR DUMP: a lock that is owned, or that threads wait on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpedMonitor {
    /// Java source form of the locked object's class.
    pub class_name: String,
    /// The owner's thread serial; `None` when unowned.
    pub owner: Option<u32>,
    pub entry_count: i32,
    /// Threads blocked entering it (or re-entering it after a notify).
    pub waiting_to_enter: Vec<u32>,
    /// Threads in Object.wait on it.
    pub waiting_to_be_notified: Vec<u32>,
}

/// MONITOR DUMP: every thread's state, then every owned or contended monitor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MonitorDump {
    pub threads: Vec<DumpedThread>,
    pub monitors: Vec<DumpedMonitor>,
}

impl MonitorDump {
    /// The trace serials the dump refers to, which must be written before it.
    pub fn trace_serials(&self) -> impl Iterator<Item = u32> + '_ {
        self.threads.iter().map(|t| t.trace_serial)
    }
}

/// MONITOR DUMP BEGIN … MONITOR DUMP END.
pub fn write_monitor_dump(w: &mut dyn Write, dump: &MonitorDump) -> io::Result<()> {
    writeln!(w, "MONITOR DUMP BEGIN")?;
    for t in &dump.threads {
        writeln!(w, "    THREAD {}, trace {}, status: {}", t.serial, t.trace_serial, t.status.code())?;
    }
    for m in &dump.monitors {
        match m.owner {
            Some(owner) => {
                writeln!(w, "    MONITOR {}", m.class_name)?;
                writeln!(w, "\towner: thread {owner}, entry count: {}", m.entry_count)?;
            }
            None => writeln!(w, "    MONITOR {} unowned", m.class_name)?,
        }
        write!(w, "\twaiting to enter:")?;
        write_thread_list(w, &m.waiting_to_enter)?;
        write!(w, "\twaiting to be notified:")?;
        write_thread_list(w, &m.waiting_to_be_notified)?;
    }
    writeln!(w, "MONITOR DUMP END")
}

/// ` thread 1, thread 2` and the end of the line.
fn write_thread_list(w: &mut dyn Write, serials: &[u32]) -> io::Result<()> {
    let items: Vec<String> = serials.iter().map(|s| format!(" thread {s}")).collect();
    writeln!(w, "{}", items.join(","))
}

/// `thread 200005`, or `<unknown thread>` for serial 0 (a thread the agent has not seen start).
fn thread_label(serial: u32) -> String {
    if serial == 0 { "<unknown thread>".into() } else { format!("thread {serial}") }
}

/// `WAIT: MONITOR Ljava/lang/Object;, timeout=1000, thread 200005`: a thread called Object.wait.
/// `signature` is the JVM form of the object's class, as HPROF printed it; timeout 0 means forever.
pub fn write_monitor_wait(w: &mut dyn Write, signature: &str, timeout_ms: i64, thread_serial: u32) -> io::Result<()> {
    writeln!(w, "WAIT: MONITOR {signature}, timeout={timeout_ms}, {}", thread_label(thread_serial))
}

/// `WAITED: MONITOR Ljava/lang/Object;, time_waited=5, thread 200009`: the wait returned after that many ms.
pub fn write_monitor_waited(w: &mut dyn Write, signature: &str, waited_ms: u64, thread_serial: u32) -> io::Result<()> {
    writeln!(w, "WAITED: MONITOR {signature}, time_waited={waited_ms}, {}", thread_label(thread_serial))
}

/// `SLEEP: timeout=1000, thread 200005`: a thread called Thread.sleep for that many ms.
pub fn write_sleep(w: &mut dyn Write, timeout_ms: i64, thread_serial: u32) -> io::Result<()> {
    writeln!(w, "SLEEP: timeout={timeout_ms}, {}", thread_label(thread_serial))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_line_as_hprof_printed_it() {
        let mut out = Vec::new();
        write_sleep(&mut out, 250, 200007).unwrap();
        write_sleep(&mut out, 0, 0).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "SLEEP: timeout=250, thread 200007\nSLEEP: timeout=0, <unknown thread>\n"
        );
    }

    fn status(state: RunState) -> ThreadStatus {
        ThreadStatus { suspended: false, interrupted: false, in_native: false, state }
    }

    #[test]
    fn status_codes_with_prefixes() {
        assert_eq!(status(RunState::MonitorWait).code(), "MW");
        assert_eq!(ThreadStatus::TERMINATED.code(), "ZO");
        let all = ThreadStatus { suspended: true, interrupted: true, in_native: true, state: RunState::Runnable };
        assert_eq!(all.code(), "S|intr|native|R");
    }

    #[test]
    fn dump_layout_matches_hprof() {
        let dump = MonitorDump {
            threads: vec![
                DumpedThread { serial: 200001, trace_serial: 300012, status: status(RunState::Runnable) },
                DumpedThread { serial: 200005, trace_serial: 300013, status: status(RunState::MonitorWait) },
                DumpedThread { serial: 200006, trace_serial: 300000, status: ThreadStatus::TERMINATED },
            ],
            monitors: vec![
                DumpedMonitor {
                    class_name: "Bank$Ledger".into(),
                    owner: Some(200001),
                    entry_count: 1,
                    waiting_to_enter: vec![200005, 200007],
                    waiting_to_be_notified: vec![200008],
                },
                DumpedMonitor {
                    class_name: "java.lang.Object".into(),
                    owner: None,
                    entry_count: 0,
                    waiting_to_enter: vec![],
                    waiting_to_be_notified: vec![200009],
                },
            ],
        };
        let mut out = Vec::new();
        write_monitor_dump(&mut out, &dump).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "MONITOR DUMP BEGIN\n\
             \x20   THREAD 200001, trace 300012, status: R\n\
             \x20   THREAD 200005, trace 300013, status: MW\n\
             \x20   THREAD 200006, trace 300000, status: ZO\n\
             \x20   MONITOR Bank$Ledger\n\
             \towner: thread 200001, entry count: 1\n\
             \twaiting to enter: thread 200005, thread 200007\n\
             \twaiting to be notified: thread 200008\n\
             \x20   MONITOR java.lang.Object unowned\n\
             \twaiting to enter:\n\
             \twaiting to be notified: thread 200009\n\
             MONITOR DUMP END\n"
        );
        assert_eq!(dump.trace_serials().collect::<Vec<_>>(), [300012, 300013, 300000]);
    }

    #[test]
    fn wait_lines_match_hprof() {
        let mut out = Vec::new();
        write_monitor_wait(&mut out, "Ljava/lang/ref/ReferenceQueue$Lock;", 60000, 200004).unwrap();
        write_monitor_waited(&mut out, "Ljava/lang/Object;", 5, 200009).unwrap();
        write_monitor_wait(&mut out, "Ljava/lang/Object;", 0, 0).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "WAIT: MONITOR Ljava/lang/ref/ReferenceQueue$Lock;, timeout=60000, thread 200004\n\
             WAITED: MONITOR Ljava/lang/Object;, time_waited=5, thread 200009\n\
             WAIT: MONITOR Ljava/lang/Object;, timeout=0, <unknown thread>\n"
        );
    }
}
