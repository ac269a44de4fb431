//! Who may read what `hprof serve` shows: the `Host:` a request names and, when the server listens
//! beyond loopback, the random token of the URL it printed.
//!
//! The Host check defeats DNS rebinding: a page on evil.example whose name is re-pointed at 127.0.0.1 can
//! make the browser connect here, but its requests say `Host: evil.example`. The token keeps out other
//! people on the network, and other users' processes, when `--bind` is not a loopback address. It comes
//! in the URL (`?token=…`, as Jupyter does), then rides in an HttpOnly, SameSite=Strict cookie so the
//! links of the pages work without it.

use std::net::IpAddr;

/// The decision on one request.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Answer it; set this cookie with the answer (the token came in the URL or a header).
    Allow { set_cookie: Option<String> },
    /// Refuse it with this status and short message; nothing of the file is shown.
    Deny { status: u16, message: &'static str },
}

pub struct Access {
    port: u16,
    /// The `Host:` names (without port) accepted, lower case.
    names: Vec<String>,
    /// An unspecified bind (0.0.0.0, ::) is reached under any of the machine's addresses: any IP literal
    /// is accepted as the name (the token is what keeps strangers out).
    any_ip: bool,
    token: Option<String>,
}

impl Access {
    /// The rules for a server bound to `ip:port`. A loopback bind needs no token; any other gets `token`.
    pub fn new(ip: IpAddr, port: u16, token: Option<String>, hostname: Option<String>) -> Access {
        let mut names = vec![host_literal(ip)];
        if ip.is_loopback() {
            names.push("localhost".into());
        } else if ip.is_unspecified() {
            names.push("localhost".into());
            names.extend(hostname.map(|h| h.to_ascii_lowercase()));
        } else {
            names.extend(hostname.map(|h| h.to_ascii_lowercase()));
        }
        Access { port, names, any_ip: ip.is_unspecified(), token }
    }

    pub fn needs_token(&self) -> bool {
        self.token.is_some()
    }

    /// The cookie that carries the token; named by port, since cookies do not tell ports apart.
    pub fn cookie_name(&self) -> String {
        format!("hprof_token_{}", self.port)
    }

    /// Judges a request by its `Host:`, its query string, its `Cookie:` headers and `Authorization:`.
    pub fn check<'a>(
        &self,
        host: Option<&str>,
        query: &str,
        cookies: impl Iterator<Item = &'a str>,
        authorization: Option<&str>,
    ) -> Verdict {
        let Some(host) = host else {
            return Verdict::Deny { status: 400, message: "a Host header is required" };
        };
        if !self.host_ok(host) {
            return Verdict::Deny { status: 421, message: "this server answers only under the address it printed" };
        }
        let Some(token) = &self.token else { return Verdict::Allow { set_cookie: None } };
        let name = self.cookie_name();
        let from_cookie = cookies
            .flat_map(|h| h.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .any(|(k, v)| k == name && same(v, token));
        if from_cookie {
            return Verdict::Allow { set_cookie: None };
        }
        let from_query =
            query.split('&').filter_map(|kv| kv.split_once('=')).any(|(k, v)| k == "token" && same(v, token));
        let from_header = authorization.and_then(|a| a.strip_prefix("token ")).is_some_and(|v| same(v.trim(), token));
        if from_query || from_header {
            return Verdict::Allow { set_cookie: Some(format!("{name}={token}; Path=/; HttpOnly; SameSite=Strict")) };
        }
        Verdict::Deny { status: 403, message: "a token is required: open the URL that hprof serve printed" }
    }

    fn host_ok(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split_host(&host);
        let port_ok = match port {
            Some(p) => p.parse::<u16>().ok() == Some(self.port),
            None => self.port == 80,
        };
        port_ok
            && (self.names.iter().any(|n| n == name)
                || (self.any_ip && name.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().is_ok()))
    }
}

/// `name` and `port` of a Host value; IPv6 literals keep their brackets.
fn split_host(host: &str) -> (&str, Option<&str>) {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(i) => (&host[..=i], host[i + 1..].strip_prefix(':')),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host, None),
    }
}

/// An address as it appears in a Host header: IPv6 in brackets.
pub fn host_literal(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// Compares without stopping at the first difference, so timing tells nothing about the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 128 random bits from the operating system, as 32 hex digits.
pub fn new_token() -> Result<String, String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| format!("no random token: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow() -> Verdict {
        Verdict::Allow { set_cookie: None }
    }

    #[test]
    fn loopback_answers_its_own_names_only() {
        let a = Access::new("127.0.0.1".parse().unwrap(), 8080, None, Some("box".into()));
        let none = std::iter::empty();
        assert_eq!(a.check(Some("127.0.0.1:8080"), "", none.clone(), None), allow());
        assert_eq!(a.check(Some("LocalHost:8080"), "", none.clone(), None), allow());
        for bad in ["evil.example:8080", "127.0.0.1:8081", "127.0.0.1", "box:8080", "[::1]:8080", "localhost:80"] {
            assert!(matches!(a.check(Some(bad), "", none.clone(), None), Verdict::Deny { status: 421, .. }), "{bad}");
        }
        assert!(matches!(a.check(None, "", none, None), Verdict::Deny { status: 400, .. }));
        let v6 = Access::new("::1".parse().unwrap(), 9000, None, None);
        assert_eq!(v6.check(Some("[::1]:9000"), "", std::iter::empty(), None), allow());
        assert!(matches!(v6.check(Some("127.0.0.1:9000"), "", std::iter::empty(), None), Verdict::Deny { .. }));
    }

    #[test]
    fn beyond_loopback_the_token_is_required() {
        let t = "0123456789abcdef0123456789abcdef".to_string();
        let a = Access::new("0.0.0.0".parse().unwrap(), 8080, Some(t.clone()), Some("box".into()));
        let h = Some("127.0.0.1:8080");
        let none = std::iter::empty();
        assert!(matches!(a.check(h, "", none.clone(), None), Verdict::Deny { status: 403, .. }));
        assert!(matches!(a.check(h, "token=0123", none.clone(), None), Verdict::Deny { status: 403, .. }));
        match a.check(h, &format!("x=1&token={t}"), none.clone(), None) {
            Verdict::Allow { set_cookie: Some(c) } => {
                assert!(c.starts_with(&format!("hprof_token_8080={t};")) && c.contains("HttpOnly"), "{c}");
                assert!(c.contains("SameSite=Strict"), "{c}");
            }
            v => panic!("{v:?}"),
        }
        let cookie = format!("a=b; hprof_token_8080={t}");
        assert_eq!(a.check(h, "", [cookie.as_str()].into_iter(), None), allow());
        assert!(matches!(a.check(h, "", ["hprof_token_8081=x"].into_iter(), None), Verdict::Deny { .. }));
        assert!(matches!(
            a.check(Some("box:8080"), "", none.clone(), Some(&format!("token {t}"))),
            Verdict::Allow { .. }
        ));
        assert!(matches!(
            a.check(Some("evil.example:8080"), &format!("token={t}"), none, None),
            Verdict::Deny { status: 421, .. }
        ));
    }

    #[test]
    fn tokens_are_random() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
