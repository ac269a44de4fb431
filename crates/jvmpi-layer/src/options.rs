//! The layer's own options, in front of the agent it loads:
//! `-agentpath:libjvmpi.so=[locals=auto|y|n,][verbose=y|n,][/abs/libagent.so[=agent options]]`.
//!
//! Only the names below are taken as the layer's, and only at the front: whatever follows is the agent and
//! its options, commas and all, so that `-agentpath:libjvmpi.so=/abs/libagent.so=a,b` means what it always did.

/// Whether the layer takes JVMTI's `can_access_local_variables` (see `local_access.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locals {
    /// Take it if the agent needs it, as far as the layer can tell while it still can.
    Auto,
    Yes,
    No,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    pub locals: Locals,
    /// Say on stderr which capabilities the layer took, and why.
    pub verbose: bool,
    /// `/abs/libagent.so[=options]`: the agent the layer loads; none when it comes through `-Xrun`.
    pub agent: Option<String>,
}

pub fn parse(s: &str) -> Result<Options, String> {
    let mut options = Options { locals: Locals::Auto, verbose: false, agent: None };
    let mut rest = s;
    while let Some((name, value, after)) = layer_option(rest) {
        match name {
            "locals" => {
                options.locals = match value {
                    "auto" => Locals::Auto,
                    "y" => Locals::Yes,
                    "n" => Locals::No,
                    _ => return Err(format!("option locals={value}: expected auto, y or n")),
                }
            }
            "verbose" => {
                options.verbose = match value {
                    "y" => true,
                    "n" => false,
                    _ => return Err(format!("option verbose={value}: expected y or n")),
                }
            }
            _ => unreachable!("layer_option returns only the layer's names"),
        }
        rest = after;
    }
    if !rest.is_empty() {
        options.agent = Some(rest.to_owned());
    }
    Ok(options)
}

/// The layer option at the front of `s` — its name, value and what follows its comma — if there is one.
fn layer_option(s: &str) -> Option<(&'static str, &str, &str)> {
    let name = ["locals", "verbose"].into_iter().find(|n| s.strip_prefix(n).is_some_and(|r| r.starts_with('=')))?;
    let item = &s[name.len() + 1..];
    Some(match item.split_once(',') {
        Some((value, after)) => (name, value, after),
        None => (name, item, ""),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_alone_keeps_its_options_and_commas() {
        let o = parse("/abs/libagent.so=a=1,locals=n").unwrap();
        assert_eq!(
            o,
            Options { locals: Locals::Auto, verbose: false, agent: Some("/abs/libagent.so=a=1,locals=n".into()) }
        );
    }

    #[test]
    fn layer_options_come_first_in_any_order() {
        let o = parse("verbose=y,locals=n,/abs/libagent.so").unwrap();
        assert_eq!(o, Options { locals: Locals::No, verbose: true, agent: Some("/abs/libagent.so".into()) });
        let o = parse("locals=y").unwrap();
        assert_eq!(o, Options { locals: Locals::Yes, verbose: false, agent: None });
        assert_eq!(parse("").unwrap(), Options { locals: Locals::Auto, verbose: false, agent: None });
    }

    #[test]
    fn a_bad_value_is_named() {
        assert_eq!(parse("locals=maybe,/a.so").unwrap_err(), "option locals=maybe: expected auto, y or n");
        assert_eq!(parse("verbose=1").unwrap_err(), "option verbose=1: expected y or n");
    }
}
