//! `hprof ps`: the JVMs this user may attach to, as `jps -lv` would list them, container-aware.

use super::process::{Process, all_pids, our_uid};

/// What `hprof ps` shows of one JVM.
pub struct JvmEntry {
    pub pid: i32,
    pub ns_pid: i32,
    pub version: String,
    pub main: String,
    pub attachable: Option<bool>,
}

/// The JVM `p` is, or `None` if it is none.
pub fn describe(p: &Process) -> Option<JvmEntry> {
    let perf = p.perf_data().and_then(Result::ok);
    if perf.is_none() && !p.maps_libjvm() {
        return None;
    }
    let main = perf
        .as_ref()
        .and_then(|d| d.command().map(str::to_owned))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| main_from_cmdline(&p.cmdline()));
    Some(JvmEntry {
        pid: p.pid,
        ns_pid: p.ns_pid,
        version: perf.as_ref().and_then(|d| d.java_version()).unwrap_or("?").to_owned(),
        main,
        attachable: perf.as_ref().and_then(|d| d.attach_supported()),
    })
}

/// The main class or `-jar` file from a java command line, for JVMs without performance data.
fn main_from_cmdline(args: &[String]) -> String {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-cp" | "-classpath" | "--class-path" | "-p" | "--module-path" | "--add-opens" | "--add-exports" => {
                it.next();
            }
            "-jar" | "-m" | "--module" => return it.next().cloned().unwrap_or_default(),
            s if s.starts_with('-') => {}
            s => return s.to_owned(),
        }
    }
    args.first().cloned().unwrap_or_default()
}

pub fn run() -> Result<(), String> {
    let me = our_uid();
    let own = std::process::id() as i32;
    let jvms: Vec<JvmEntry> = all_pids()
        .into_iter()
        .filter(|&pid| pid != own)
        .filter_map(|pid| Process::open(pid).ok())
        .filter(|p| p.uid == me)
        .filter_map(|p| describe(&p))
        .collect();
    println!("{:>8}  {:<10}  MAIN", "PID", "JDK");
    for j in &jvms {
        let mut notes = Vec::new();
        if j.ns_pid != j.pid {
            notes.push(format!("in a container as pid {}", j.ns_pid));
        }
        if j.attachable == Some(false) {
            notes.push("attach disabled".to_owned());
        }
        let notes = if notes.is_empty() { String::new() } else { format!("  ({})", notes.join(", ")) };
        println!("{:>8}  {:<10}  {}{notes}", j.pid, j.version, shortened(&j.main, 100));
    }
    if jvms.is_empty() {
        eprintln!("no JVM of this user is running");
    }
    Ok(())
}

/// The first `max` characters of a long command line, marked as cut.
fn shortened(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_owned() } else { format!("{}…", s.chars().take(max).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::main_from_cmdline;

    #[test]
    fn main_class_or_jar() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(main_from_cmdline(&v("java -cp a:b -Xmx1g App x")), "App");
        assert_eq!(main_from_cmdline(&v("java -jar app.jar")), "app.jar");
        assert_eq!(main_from_cmdline(&v("java -m mod/main.Cls")), "mod/main.Cls");
    }
}
