//! Points in a profile's time on the command line (`--from 12s --to 15s`): `12s`, `1.5s`, `500ms`, `2m`, or
//! a bare number of seconds; in milliseconds since the profiled session started.

pub fn parse_time_ms(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (t, 1000.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale < 1e15 => Ok((v * scale).round() as u64),
        _ => Err(format!("{s:?} is not a time since the start (e.g. 12s, 1.5s, 500ms, 2m)")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_time_ms;

    #[test]
    fn times() {
        assert_eq!(parse_time_ms("12s"), Ok(12_000));
        assert_eq!(parse_time_ms("1.5s"), Ok(1_500));
        assert_eq!(parse_time_ms("500ms"), Ok(500));
        assert_eq!(parse_time_ms("2m"), Ok(120_000));
        assert_eq!(parse_time_ms("3"), Ok(3_000));
        assert!(parse_time_ms("-1s").is_err() && parse_time_ms("s").is_err() && parse_time_ms("1h").is_err());
    }
}
