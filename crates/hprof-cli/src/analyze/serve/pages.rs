//! HTML and URL helpers of the web view: escaping, the page frame, query strings.

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A page of the web view: the navigation bar, a title and the body (already HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t} - hprof</title><style>\
         body{{font-family:sans-serif;margin:1em}} table{{border-collapse:collapse}} td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}\
         td.n{{text-align:right;font-family:monospace}} nav a{{margin-right:1em}} svg{{width:100%;height:auto}}</style></head><body>\
         <nav><a href=\"/\">Summary</a><a href=\"/histo\">Histogram</a><a href=\"/dominators\">Dominator tree</a>\
         <a href=\"/leaks\">Leak suspects</a><a href=\"/flame\">Flame graph</a></nav><h1>{t}</h1>{body}</body></html>",
        t = esc(title)
    )
}

/// The decoded value of `key` in a query string (`a=1&b=x%20y`).
pub fn query(q: &str, key: &str) -> Option<String> {
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"._-".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode() {
        assert_eq!(query("a=1&filter=java.util.%2AMap+x", "filter").as_deref(), Some("java.util.*Map x"));
        assert_eq!(query("a=1", "b"), None);
        assert_eq!(urlencode("a$b c"), "a%24b%20c");
        assert_eq!(esc("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
    }
}
