//! Which threads are sampled: the front end's CPU SAMPLING command switches sampling on or off for one
//! thread (by serial) or for all. Both samplers obey it — the engine, which stops an off thread's clock,
//! and sampler=safepoint, which skips it — so the rules live here once: a thread is sampled while
//! sampling is on for all and not off for it; switching all on or off forgets the per-thread choices.

use std::sync::Mutex;

/// The on/off state the front end set, for every thread. A new one has every thread on.
#[derive(Debug)]
pub struct ThreadSwitches {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    all_on: bool,
    /// Serials switched off one by one (few: the front end names them).
    off: Vec<u32>,
}

impl Default for ThreadSwitches {
    fn default() -> ThreadSwitches {
        ThreadSwitches { state: Mutex::new(State { all_on: true, off: Vec::new() }) }
    }
}

impl ThreadSwitches {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Switches one thread (`Some(serial)`) or all (`None`). A thread switched on while all are off stays
    /// off until all are switched on.
    pub fn set(&self, serial: Option<u32>, on: bool) {
        let mut state = self.state();
        match serial {
            Some(s) => {
                state.off.retain(|&d| d != s);
                if !on {
                    state.off.push(s);
                }
            }
            None => {
                state.all_on = on;
                state.off.clear();
            }
        }
    }

    /// Whether the thread with this serial is to be sampled.
    pub fn is_on(&self, serial: u32) -> bool {
        let state = self.state();
        state.all_on && !state.off.contains(&serial)
    }

    /// Whether sampling is on for all (threads switched off one by one aside).
    pub fn all_on(&self) -> bool {
        self.state().all_on
    }

    /// Every thread on again (a new session).
    pub fn reset(&self) {
        self.set(None, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_starts_on() {
        let s = ThreadSwitches::default();
        assert!(s.all_on());
        assert!(s.is_on(200001) && s.is_on(200002));
    }

    #[test]
    fn one_thread_off_leaves_the_others_on() {
        let s = ThreadSwitches::default();
        s.set(Some(200002), false);
        s.set(Some(200002), false);
        assert!(!s.is_on(200002));
        assert!(s.is_on(200001) && s.all_on());
        s.set(Some(200002), true);
        assert!(s.is_on(200002), "switched on again, once however often it was switched off");
    }

    #[test]
    fn all_off_wins_over_one_thread_on_until_all_are_on() {
        let s = ThreadSwitches::default();
        s.set(None, false);
        s.set(Some(200001), true);
        assert!(!s.all_on());
        assert!(!s.is_on(200001) && !s.is_on(200002));
        s.set(None, true);
        assert!(s.is_on(200001) && s.is_on(200002));
    }

    #[test]
    fn all_on_or_a_reset_forgets_threads_switched_off() {
        let s = ThreadSwitches::default();
        s.set(Some(200003), false);
        s.set(None, true);
        assert!(s.is_on(200003));
        s.set(Some(200003), false);
        s.set(None, false);
        s.reset();
        assert!(s.is_on(200003) && s.all_on());
    }
}
