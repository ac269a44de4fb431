//! Dates as HPROF prints them: C's `ctime()` layout, in local time.

/// `Sun Nov 22 18:43:41 2026` for a time in milliseconds since the epoch.
pub fn ctime(millis_since_epoch: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let secs = (millis_since_epoch / 1000) as libc::time_t;
    // SAFETY: libc::tm is a C struct of integers and a pointer, valid when zeroed.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // localtime_r is thread-safe; it reads TZ once per process through tzset.
    // SAFETY: both pointers are to live locals; localtime_r writes only `tm`.
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return format!("@{}", millis_since_epoch / 1000);
    }
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// Milliseconds since the epoch, now.
pub fn now_millis() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ctime_layout() {
        let s = super::ctime(1_076_073_222_000); // Fri Feb  6 13:13:42 2004 UTC
        let parts: Vec<&str> = s.split_whitespace().collect();
        assert_eq!(parts.len(), 5, "{s}");
        assert_eq!(parts[4], "2004");
        assert!(parts[3].len() == 8 && parts[3].as_bytes()[2] == b':', "{s}");
    }
}
