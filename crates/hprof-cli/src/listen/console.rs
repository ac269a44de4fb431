//! The listener's command language: one command per line, typed or given with `--command`.

use hprof_format::commands::Command;

pub const HELP: &str = "\
Commands (typed at the prompt, or given with --command):
  force-gc                                  run a garbage collection
  dump-heap                                 write a heap dump (agent started with heap=dump|all)
  alloc-sites [--by-alloc] [--incremental] [--force-gc] [CUTOFF]
                                            write the allocation sites (heap=sites|all)
  heap-summary                              write the heap totals (heap=sites|all)
  cpu-samples [CUTOFF]                      write the CPU samples so far (cpu=samples)
  sampling on|off [THREAD-OBJECT-ID]        CPU sampling for one thread (hex id) or all
  clear-samples                             forget the CPU samples so far
  alloc-tracking on|off                     allocation tracking
  depth N                                   maximum stack depth from now on
  dump-traces                               write every trace not yet written
  exit-vm                                   make the JVM exit (System.exit(0))
  eof                                       tell the agent no more commands will come
  wait SECONDS                              pause (useful between --command steps)
  help                                      this list
  quit                                      stop listening (the program goes on without us)
";

/// A parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Send(Command),
    Wait(f64),
    Help,
    Quit,
    Empty,
}

pub fn parse(line: &str) -> Result<Line, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&verb, rest)) = words.split_first() else { return Ok(Line::Empty) };
    let bad = |why: &str| Err(format!("{line:?}: {why} (type `help` for the list)"));
    let cutoff = |w: Option<&&str>| -> Result<f32, String> {
        match w {
            None => Ok(0.0001),
            Some(s) => s
                .parse::<f32>()
                .ok()
                .filter(|c| (0.0..=1.0).contains(c))
                .ok_or_else(|| format!("{line:?}: cutoff must be a number from 0 to 1")),
        }
    };
    let on_off = |w: Option<&&str>| -> Result<bool, String> {
        match w.copied() {
            Some("on") => Ok(true),
            Some("off") => Ok(false),
            _ => Err(format!("{line:?}: say on or off")),
        }
    };
    let cmd = match verb {
        "force-gc" => Command::ForceGc,
        "dump-heap" => Command::DumpHeap,
        "heap-summary" => Command::HeapSummary,
        "dump-traces" => Command::DumpTraces,
        "exit-vm" => Command::ExitVm,
        "eof" => Command::Eof,
        "clear-samples" => Command::ClearCpuSamples,
        "alloc-sites" => {
            let mut flags = 0u16;
            let mut value = None;
            for w in rest {
                match *w {
                    "--incremental" => flags |= 0x1,
                    "--by-alloc" => flags |= 0x2,
                    "--force-gc" => flags |= 0x4,
                    _ if value.is_none() => value = Some(w),
                    _ => return bad("too many arguments"),
                }
            }
            Command::AllocSites { flags, cutoff: cutoff(value)? }
        }
        "cpu-samples" => Command::CpuSamples { cutoff: cutoff(rest.first())? },
        "sampling" => {
            let on = on_off(rest.first())?;
            let thread_object_id = match rest.get(1) {
                None => 0,
                Some(id) => u64::from_str_radix(id.trim_start_matches("0x"), 16)
                    .map_err(|_| format!("{line:?}: thread object id must be hexadecimal"))?,
            };
            Command::CpuSampling { thread_object_id, on }
        }
        "alloc-tracking" => Command::AllocTracking(on_off(rest.first())?),
        "depth" => match rest.first().and_then(|d| d.parse::<u16>().ok()) {
            Some(d) => Command::SetDepth(d),
            None => return bad("depth needs a number from 0 to 65535"),
        },
        "wait" => {
            return match rest.first().and_then(|s| s.parse::<f64>().ok()).filter(|s| *s >= 0.0 && *s < 86400.0) {
                Some(s) => Ok(Line::Wait(s)),
                None => bad("wait needs a number of seconds"),
            };
        }
        "help" | "?" => return Ok(Line::Help),
        "quit" | "exit" => return Ok(Line::Quit),
        _ => return bad("unknown command"),
    };
    Ok(Line::Send(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse("dump-heap").unwrap(), Line::Send(Command::DumpHeap));
        assert_eq!(
            parse("alloc-sites --by-alloc 0.01").unwrap(),
            Line::Send(Command::AllocSites { flags: 2, cutoff: 0.01 })
        );
        assert_eq!(
            parse("sampling off 0x1a2b").unwrap(),
            Line::Send(Command::CpuSampling { thread_object_id: 0x1a2b, on: false })
        );
        assert_eq!(parse("depth 12").unwrap(), Line::Send(Command::SetDepth(12)));
        assert_eq!(parse("wait 1.5").unwrap(), Line::Wait(1.5));
        assert_eq!(parse("  ").unwrap(), Line::Empty);
        assert!(parse("cpu-samples 7").is_err());
        assert!(parse("dump-everything").unwrap_err().contains("unknown command"));
        assert!(parse("sampling maybe").is_err());
    }
}
