//! `threads=GLOB`, `include=` and `exclude=`: which samples count. Patterns are globs (`*` any run of
//! characters, `?` one), as async-profiler's `--include`/`--exclude` take them; a frame pattern is matched
//! against `Class.method` of every frame of a stack, a thread pattern against the thread's name.

use crate::options::Options;
use rustc_hash::FxHashMap;

/// Whether `text` matches `pattern` as a whole (`*` any run, `?` any one character).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and the text position it currently stands for: backtrack there on a mismatch.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The options' filters, with what each thread and frame was found to be, so that a name is matched once.
#[derive(Default)]
pub struct Filters {
    threads: Option<String>,
    include: Vec<String>,
    exclude: Vec<String>,
    /// Thread serial → kept.
    thread_kept: FxHashMap<u32, bool>,
    /// Frame index → (matches an include pattern, matches an exclude pattern).
    frame_matches: FxHashMap<u32, (bool, bool)>,
}

impl Filters {
    pub fn new(options: &Options) -> Filters {
        Filters {
            threads: options.threads.clone(),
            include: options.include.clone(),
            exclude: options.exclude.clone(),
            ..Filters::default()
        }
    }

    /// Whether the thread named `name` (serial `serial`) is sampled.
    pub fn keeps_thread(&mut self, serial: u32, name: impl FnOnce() -> Option<String>) -> bool {
        let Some(pattern) = &self.threads else { return true };
        *self.thread_kept.entry(serial).or_insert_with(|| name().is_some_and(|n| glob_match(pattern, &n)))
    }

    /// Whether a stack (frame indexes, named by `name`) is kept: it has a frame matching an include pattern
    /// (when any is given) and none matching an exclude pattern.
    pub fn keeps_stack(&mut self, frames: &[u32], name: impl Fn(u32) -> String) -> bool {
        if self.include.is_empty() && self.exclude.is_empty() {
            return true;
        }
        let mut included = self.include.is_empty();
        for &f in frames {
            let (inc, exc) = *self.frame_matches.entry(f).or_insert_with(|| {
                let n = name(f);
                (self.include.iter().any(|p| glob_match(p, &n)), self.exclude.iter().any(|p| glob_match(p, &n)))
            });
            if exc {
                return false;
            }
            included |= inc;
        }
        included
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("worker-*", "worker-12"));
        assert!(!glob_match("worker-*", "main"));
        assert!(glob_match("*Parser.parse", "com.example.Parser.parse"));
        assert!(!glob_match("*Parser.parse", "com.example.Parser.parseAll"));
        assert!(glob_match("java.*.read?", "java.io.FileInputStream.read0"));
        assert!(glob_match("a*b*c", "aXXbYYbc"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("?", ""));
        assert!(glob_match("Ünï*", "Ünïcode"));
    }

    fn filters(options: &str) -> Filters {
        let Ok(crate::options::Parsed::Run(o)) = Options::parse(Some(options)) else { panic!("{options}") };
        Filters::new(&o)
    }

    #[test]
    fn threads_are_kept_by_name_once_looked_up() {
        let mut f = filters("cpu=wall,threads=worker-*");
        assert!(f.keeps_thread(1, || Some("worker-1".into())));
        assert!(!f.keeps_thread(2, || Some("main".into())));
        assert!(!f.keeps_thread(3, || None), "a thread without a name matches no pattern");
        assert!(f.keeps_thread(1, || panic!("asked twice")));
        assert!(filters("cpu=wall").keeps_thread(9, || panic!("no pattern, no lookup")));
    }

    #[test]
    fn include_needs_one_frame_and_exclude_drops_on_any() {
        let names = ["Work.run", "java.lang.Thread.sleep0", "Main.main"];
        let name = |i: u32| names[i as usize].to_string();
        let mut f = filters("cpu=wall,include=Work.*,exclude=*.sleep0");
        assert!(f.keeps_stack(&[0, 2], name));
        assert!(!f.keeps_stack(&[2], name), "no frame matches the include pattern");
        assert!(!f.keeps_stack(&[1, 0, 2], name), "a frame matches the exclude pattern");
        let mut only_exclude = filters("cpu=wall,exclude=Main.main");
        assert!(only_exclude.keeps_stack(&[0, 1], name));
        assert!(!only_exclude.keeps_stack(&[0, 2], name));
    }
}
