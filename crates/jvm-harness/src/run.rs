use crate::{Jdk, JvmSlot, agent_library, java_classes};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A `java` command line under construction.
pub struct Java {
    jdk: Jdk,
    vm_args: Vec<String>,
    main: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    timeout: Duration,
    /// RLIMIT_FSIZE for the JVM: writes past it fail with EFBIG (HotSpot ignores SIGXFSZ), as on a full disk.
    file_size_limit: Option<u64>,
    /// The JVM's umask (the test's own otherwise).
    umask: Option<libc::mode_t>,
    /// The user and group the JVM runs as (needs root).
    user: Option<(libc::uid_t, libc::gid_t)>,
}

impl Java {
    /// `java` of `jdk`, run in `cwd` (where the agent writes java.hprof.txt by default).
    pub fn new(jdk: &Jdk, cwd: &Path) -> Java {
        Java {
            jdk: jdk.clone(),
            vm_args: Vec::new(),
            main: Vec::new(),
            env: Vec::new(),
            cwd: cwd.to_path_buf(),
            timeout: Duration::from_secs(180),
            file_size_limit: None,
            umask: None,
            user: None,
        }
    }

    /// `-agentpath:<target>/libhprof.so=<options>`.
    pub fn agentpath(mut self, options: &str) -> Java {
        let lib = agent_library();
        let arg = if options.is_empty() {
            format!("-agentpath:{}", lib.display())
        } else {
            format!("-agentpath:{}={options}", lib.display())
        };
        self.vm_args.push(arg);
        self
    }

    /// `-agentlib:hprof=<options>`, with the agent found through LD_LIBRARY_PATH.
    pub fn agentlib(mut self, options: &str) -> Java {
        self.vm_args.push(if options.is_empty() {
            "-agentlib:hprof".into()
        } else {
            format!("-agentlib:hprof={options}")
        });
        self.with_library_path()
    }

    /// `-Xrunhprof:<options>`, with the agent found through LD_LIBRARY_PATH.
    pub fn xrun(mut self, options: &str) -> Java {
        self.vm_args.push(if options.is_empty() { "-Xrunhprof".into() } else { format!("-Xrunhprof:{options}") });
        self.with_library_path()
    }

    fn with_library_path(self) -> Java {
        let dir = agent_library().parent().expect("lib dir").display().to_string();
        self.env("LD_LIBRARY_PATH", &dir)
    }

    pub fn vm_arg(mut self, arg: &str) -> Java {
        self.vm_args.push(arg.to_owned());
        self
    }

    /// Runs a program from java/programs.
    pub fn class(mut self, name: &str) -> Java {
        self.main = vec!["-cp".into(), java_classes().display().to_string(), name.to_owned()];
        self
    }

    /// Runs something other than a class, e.g. `-version`.
    pub fn main_args(mut self, args: &[&str]) -> Java {
        self.main = args.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn arg(mut self, arg: &str) -> Java {
        self.main.push(arg.to_owned());
        self
    }

    pub fn args(mut self, args: &[&str]) -> Java {
        self.main.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Java {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    pub fn timeout(mut self, t: Duration) -> Java {
        self.timeout = t;
        self
    }

    /// No file the JVM writes may grow past `bytes`: a write beyond fails with EFBIG, as one on a full
    /// file system fails with ENOSPC.
    pub fn file_size_limit(mut self, bytes: u64) -> Java {
        self.file_size_limit = Some(bytes);
        self
    }

    /// Starts the JVM with this umask: files it creates with a mode of their own choosing show it.
    pub fn umask(mut self, mask: u32) -> Java {
        self.umask = Some(mask as libc::mode_t);
        self
    }

    /// Runs the JVM as `uid`:`gid` with no supplementary groups (the test must run as root).
    pub fn user(mut self, uid: u32, gid: u32) -> Java {
        self.user = Some((uid, gid));
        self
    }

    /// The command line, for messages.
    pub fn describe(&self) -> String {
        format!("{} {} {}", self.jdk.java().display(), self.vm_args.join(" "), self.main.join(" "))
    }

    /// Starts the JVM (holding a JVM slot until it is waited for).
    pub fn spawn(self) -> Running {
        let slot = JvmSlot::acquire();
        self.spawn_holding(Some(slot))
    }

    /// Starts the JVM without taking a slot (the caller holds one).
    pub fn spawn_holding(self, slot: Option<JvmSlot>) -> Running {
        let stdout = self.cwd.join("stdout.txt");
        let stderr = self.cwd.join("stderr.txt");
        let mut cmd = Command::new(self.jdk.java());
        cmd.args(&self.vm_args)
            .args(&self.main)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).expect("stdout file"))
            .stderr(File::create(&stderr).expect("stderr file"));
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if self.file_size_limit.is_some() || self.umask.is_some() || self.user.is_some() {
            use std::os::unix::process::CommandExt;
            let limit = self.file_size_limit.map(|bytes| libc::rlimit { rlim_cur: bytes, rlim_max: bytes });
            let umask = self.umask;
            let user = self.user;
            // SAFETY: runs in the child between fork and exec, calling only setrlimit, umask, setgroups,
            // setgid and setuid (async-signal-safe) on values copied in before the fork.
            unsafe {
                cmd.pre_exec(move || {
                    if let Some(limit) = &limit
                        && libc::setrlimit(libc::RLIMIT_FSIZE, limit) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    if let Some(mask) = umask {
                        libc::umask(mask);
                    }
                    if let Some((uid, gid)) = user
                        && (libc::setgroups(0, std::ptr::null()) != 0
                            || libc::setgid(gid) != 0
                            || libc::setuid(uid) != 0)
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
        }
        let describe = self.describe();
        let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {describe}: {e}"));
        Running { child, describe, cwd: self.cwd, timeout: self.timeout, started: Instant::now(), _slot: slot }
    }

    /// Runs to completion. Panics (after killing the JVM) if it outlives the timeout.
    pub fn run(self) -> JavaRun {
        self.spawn().wait()
    }
}

/// A JVM that is running.
pub struct Running {
    child: Child,
    describe: String,
    cwd: PathBuf,
    timeout: Duration,
    started: Instant,
    _slot: Option<JvmSlot>,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: kill has no memory preconditions; the child is ours and not yet reaped while `self` holds it.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// What the JVM has printed to stdout so far.
    pub fn stdout_so_far(&self) -> String {
        std::fs::read_to_string(self.cwd.join("stdout.txt")).unwrap_or_default()
    }

    pub fn stderr_so_far(&self) -> String {
        std::fs::read_to_string(self.cwd.join("stderr.txt")).unwrap_or_default()
    }

    /// Waits until stdout contains `text` (e.g. a program's "ready" line). Panics on timeout or exit.
    pub fn wait_for_stdout(&mut self, text: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.stdout_so_far().contains(text) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited ({status}) before printing {text:?}\nstderr:\n{}",
                    self.describe,
                    self.stderr_so_far()
                );
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{} did not print {text:?} within {timeout:?}", self.describe);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for exit; kills the JVM and panics if it outlives the timeout.
    pub fn wait(mut self) -> JavaRun {
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    return JavaRun {
                        status,
                        stdout: self.stdout_so_far(),
                        stderr: self.stderr_so_far(),
                        cwd: self.cwd.clone(),
                        command: self.describe.clone(),
                    };
                }
                Ok(None) if self.started.elapsed() > self.timeout => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("timed out after {:?}: {}\nstderr:\n{}", self.timeout, self.describe, self.stderr_so_far());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("waiting for {}: {e}", self.describe),
            }
        }
    }
}

/// A finished JVM run.
#[derive(Debug)]
pub struct JavaRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub cwd: PathBuf,
    pub command: String,
}

impl JavaRun {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Panics with the command and its output unless the JVM exited 0.
    pub fn assert_success(&self) -> &JavaRun {
        assert!(
            self.status.success(),
            "{} failed ({})\nstdout:\n{}\nstderr:\n{}",
            self.command,
            self.status,
            self.stdout,
            self.stderr
        );
        self.assert_no_crash_log()
    }

    /// Panics if the JVM left an hs_err_pid*.log (it crashed).
    pub fn assert_no_crash_log(&self) -> &JavaRun {
        let logs: Vec<_> = std::fs::read_dir(&self.cwd)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_else(|_| Vec::new())
            .into_iter()
            .filter(|n: &String| n.starts_with("hs_err_pid"))
            .collect();
        assert!(logs.is_empty(), "{} crashed the JVM: {logs:?}\nstderr:\n{}", self.command, self.stderr);
        self
    }

    /// A file the run wrote in its working directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.cwd.join(name)
    }

    pub fn read(&self, name: &str) -> String {
        let p = self.file(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| {
            panic!("{} was not written by {}: {e}\nstderr:\n{}", p.display(), self.command, self.stderr)
        })
    }

    pub fn read_bytes(&self, name: &str) -> Vec<u8> {
        let p = self.file(name);
        std::fs::read(&p).unwrap_or_else(|e| {
            panic!("{} was not written by {}: {e}\nstderr:\n{}", p.display(), self.command, self.stderr)
        })
    }
}
