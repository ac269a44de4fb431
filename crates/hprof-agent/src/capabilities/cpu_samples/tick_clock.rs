//! cpu=wall's pacing: ticks on a fixed schedule (`start + k × interval`, so that the time a tick takes does
//! not stretch the next), each weighted by the intervals of wall time it stands for. A tick the scheduler
//! delays — it is late exactly when the machine is busy, often because a sampled thread is running —
//! counts for the intervals it missed, so that busy stretches are not under-sampled.

use std::time::{Duration, Instant};

pub struct TickClock {
    interval: Duration,
    next: Instant,
    /// Wall time since the last weighted tick not yet counted, in nanoseconds.
    carry_ns: u128,
    last: Instant,
}

impl TickClock {
    pub fn new(interval: Duration, now: Instant) -> TickClock {
        TickClock { interval: interval.max(Duration::from_millis(1)), next: now + interval, carry_ns: 0, last: now }
    }

    /// How long to wait for the next tick.
    pub fn until_next(&self, now: Instant) -> Duration {
        self.next.saturating_duration_since(now)
    }

    /// A tick happens at `now`: how many intervals it stands for (0: too soon after a long one, skip it).
    /// The schedule moves on past `now`.
    pub fn tick(&mut self, now: Instant) -> u64 {
        self.carry_ns += now.saturating_duration_since(self.last).as_nanos();
        self.last = now;
        let per = self.interval.as_nanos();
        let weight = self.carry_ns / per;
        self.carry_ns -= weight * per;
        while self.next <= now {
            self.next += self.interval;
        }
        weight.min(u64::MAX as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_time_ticks_weigh_one_and_late_ones_the_intervals_they_missed() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut c = TickClock::new(ms(10), t0);
        assert_eq!(c.until_next(t0), ms(10));
        assert_eq!(c.tick(t0 + ms(10)), 1);
        assert_eq!(c.until_next(t0 + ms(12)), ms(8), "the schedule does not drift with the tick's own cost");
        assert_eq!(c.tick(t0 + ms(45)), 3, "35 ms late: three intervals, 5 ms carried");
        assert_eq!(c.until_next(t0 + ms(45)), ms(5));
        assert_eq!(c.tick(t0 + ms(50)), 1, "the carried 5 ms and these 5 make one");
        let total: u64 = (1..=100).map(|k| c.tick(t0 + ms(50) + Duration::from_micros(k * 9_700))).sum();
        assert_eq!(total, 97, "970 ms of ticks 9.7 ms apart weigh 97 intervals");
    }
}
