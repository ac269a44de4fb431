//! Byte sizes on the command line: `4096`, `512M`, `200G`, `1T` (binary multiples; `K`, `KiB` and `KB`
//! alike).

pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("{s:?} is not a size (e.g. 4096, 512M, 200G)"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use K, M, G or T)")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| format!("{s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("200G"), Ok(200 << 30));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert_eq!(parse_size("1gb"), Ok(1 << 30));
        assert!(parse_size("12X").is_err() && parse_size("G").is_err() && parse_size("99999999999T").is_err());
    }
}
