//! Who is profiled: the resource attributes of every upload (service.name, host.name, process.*,
//! telemetry.sdk.*, OTEL_RESOURCE_ATTRIBUTES, labels=), and the endpoint settings the OTEL_* variables give.

use crate::options::Continuous;
use hprof_format::profiles::Label;

/// OpenTelemetry's default service name when none is given.
const UNKNOWN_SERVICE: &str = "unknown_service:java";

pub struct Settings {
    pub service: String,
    pub resource: Vec<Label>,
    /// Base URLs, without the signal's path.
    pub otlp: Option<String>,
    pub pyroscope: Option<String>,
    pub otlp_headers: Vec<(String, String)>,
    /// labels=: Pyroscope's tags.
    pub labels: Vec<(String, String)>,
}

/// `k=v,k=v` (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded as the
/// specification says; malformed members are skipped.
fn otel_list(value: &str) -> Vec<(String, String)> {
    value
        .split(',')
        .filter_map(|m| m.split_once('='))
        .filter(|(k, _)| !k.trim().is_empty())
        .map(|(k, v)| (k.trim().to_owned(), percent_decode(v.trim())))
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && s.is_char_boundary(i + 1)
            && s.is_char_boundary(i + 3)
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf, which we own.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The settings of this run from the options and the environment (`env` reads the process's).
pub fn settings(
    c: &Continuous,
    env: &dyn Fn(&str) -> Option<String>,
    runtime: (&str, &str),
) -> Result<Settings, String> {
    let otel_attrs = env("OTEL_RESOURCE_ATTRIBUTES").map(|v| otel_list(&v)).unwrap_or_default();
    let service = c
        .service
        .clone()
        .or_else(|| env("OTEL_SERVICE_NAME").filter(|s| !s.is_empty()))
        .or_else(|| otel_attrs.iter().find(|(k, _)| k == "service.name").map(|(_, v)| v.clone()))
        .unwrap_or_else(|| UNKNOWN_SERVICE.to_owned());
    let otlp = match c.otlp.as_deref() {
        Some("env") => Some(
            env("OTEL_EXPORTER_OTLP_ENDPOINT")
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_end_matches('/').to_owned())
                .ok_or("option otlp=env needs OTEL_EXPORTER_OTLP_ENDPOINT set to the collector's URL")?,
        ),
        other => other.map(str::to_owned),
    };
    let mut otlp_headers = env("OTEL_EXPORTER_OTLP_HEADERS").map(|v| otel_list(&v)).unwrap_or_default();
    for (k, v) in &c.otlp_headers {
        otlp_headers.retain(|(k2, _)| !k2.eq_ignore_ascii_case(k));
        otlp_headers.push((k.clone(), v.clone()));
    }
    let mut resource = vec![
        Label::str("service.name", &service),
        Label::str("host.name", &host_name()),
        Label::num("process.pid", std::process::id() as i64),
        Label::str("process.runtime.name", runtime.0),
        Label::str("process.runtime.version", runtime.1),
        Label::str("telemetry.sdk.name", "hprof-rs"),
        Label::str("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
        Label::str("telemetry.sdk.language", "java"),
    ];
    for (k, v) in otel_attrs.iter().chain(&c.labels) {
        resource.retain(|l| &l.key != k);
        resource.push(Label::str(k, v));
    }
    Ok(Settings { service, resource, otlp, pyroscope: c.pyroscope.clone(), otlp_headers, labels: c.labels.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_win_over_the_environment_and_labels_join_the_resource() {
        let vars = |k: &str| match k {
            "OTEL_SERVICE_NAME" => Some("from-env".to_owned()),
            "OTEL_RESOURCE_ATTRIBUTES" => Some("deployment.environment=prod,team=a%20b,bad".to_owned()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("api-key=s3cret,x=1".to_owned()),
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://c:4318/".to_owned()),
            _ => None,
        };
        let c = Continuous {
            otlp: Some("env".into()),
            labels: vec![("team".into(), "db".into())],
            otlp_headers: vec![("X".into(), "2".into())],
            ..Continuous::default()
        };
        let s = settings(&c, &vars, ("OpenJDK 64-Bit Server VM", "21.0.8")).unwrap();
        assert_eq!(s.service, "from-env");
        assert_eq!(s.otlp.as_deref(), Some("http://c:4318"));
        assert_eq!(s.otlp_headers, [("api-key".to_owned(), "s3cret".to_owned()), ("X".to_owned(), "2".to_owned())]);
        let get = |k: &str| s.resource.iter().find(|l| l.key == k).map(|l| l.value.clone());
        use hprof_format::profiles::LabelValue::{Num, Str};
        assert_eq!(get("team"), Some(Str("db".into())), "labels= wins over OTEL_RESOURCE_ATTRIBUTES");
        assert_eq!(get("deployment.environment"), Some(Str("prod".into())));
        assert_eq!(get("process.pid"), Some(Num(std::process::id() as i64)));
        assert_eq!(get("process.runtime.version"), Some(Str("21.0.8".into())));
        let none = |_: &str| None;
        let c = Continuous { otlp: Some("env".into()), ..Continuous::default() };
        assert!(settings(&c, &none, ("", "")).err().unwrap().contains("OTEL_EXPORTER_OTLP_ENDPOINT"));
        let c = Continuous { service: Some("checkout".into()), ..Continuous::default() };
        assert_eq!(settings(&c, &vars, ("", "")).unwrap().service, "checkout");
        assert_eq!(settings(&Continuous::default(), &none, ("", "")).unwrap().service, UNKNOWN_SERVICE);
    }
}
