//! Stacks as flame graphs (through `inferno`) and in Brendan Gregg's collapsed ("folded") format, the
//! common currency of flamegraph.pl, speedscope and Pyroscope.

use std::io::{self, Write};
use std::path::Path;

/// One distinct stack, frames root first, with its weight (samples, bytes, nanoseconds…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightedStack {
    pub frames: Vec<String>,
    pub weight: u64,
}

/// Frame names may not contain the separators of the collapsed format.
fn clean(frame: &str) -> String {
    frame.replace([';', '\n'], ":").replace(' ', "_")
}

/// `root;caller;callee 42` lines, heaviest stacks first.
pub fn write_collapsed(w: &mut dyn Write, stacks: &[WeightedStack]) -> io::Result<()> {
    let mut sorted: Vec<&WeightedStack> = stacks.iter().filter(|s| s.weight > 0).collect();
    sorted.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.frames.cmp(&b.frames)));
    for s in sorted {
        let line: Vec<String> = s.frames.iter().map(|f| clean(f)).collect();
        writeln!(w, "{} {}", line.join(";"), s.weight)?;
    }
    Ok(())
}

/// An interactive flame graph. `.svg` gives inferno's SVG; `.html` gives a page around it, which a
/// browser opens like any web page. The file is 0600 and replaces an existing one (or a symlink) whole,
/// once written (see the `private-files` crate).
pub fn write_flamegraph(path: &Path, stacks: &[WeightedStack], title: &str, count_name: &str) -> io::Result<()> {
    let svg = flamegraph_svg(stacks, title, count_name)?;
    let is_html = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("html"));
    private_files::write_file(path, |out| {
        if !is_html {
            return out.write_all(&svg);
        }
        write!(
            out,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n\
             <style>body{{margin:0}} svg{{width:100%;height:auto}}</style></head><body>\n",
            html_escape(title)
        )?;
        // The SVG goes in inline; strip its XML prolog, which is not valid inside HTML.
        let svg = String::from_utf8_lossy(&svg);
        let start = svg.find("<svg").unwrap_or(0);
        out.write_all(svg[start..].as_bytes())?;
        out.write_all(b"\n</body></html>\n")
    })
}

/// inferno's interactive SVG of the stacks, in memory (`hprof serve` writes no file for it).
pub fn flamegraph_svg(stacks: &[WeightedStack], title: &str, count_name: &str) -> io::Result<Vec<u8>> {
    if stacks.iter().all(|s| s.weight == 0) {
        return Ok(empty_svg(title).into_bytes());
    }
    let mut folded = Vec::new();
    write_collapsed(&mut folded, stacks)?;
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_owned();
    opts.count_name = count_name.to_owned();
    opts.hash = true;
    let mut svg = Vec::new();
    let text = String::from_utf8_lossy(&folded);
    inferno::flamegraph::from_lines(&mut opts, text.lines(), &mut svg).map_err(io::Error::other)?;
    Ok(svg)
}

fn empty_svg(title: &str) -> String {
    format!(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"60\">\
         <text x=\"10\" y=\"30\">{}: no samples</text></svg>\n",
        html_escape(title)
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(frames: &[&str], weight: u64) -> WeightedStack {
        WeightedStack { frames: frames.iter().map(|s| s.to_string()).collect(), weight }
    }

    #[test]
    fn collapsed_lines_heaviest_first() {
        let mut out = Vec::new();
        write_collapsed(&mut out, &[stack(&["main", "a"], 3), stack(&["main", "b c;d"], 7), stack(&["x"], 0)]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "main;b_c:d 7\nmain;a 3\n");
    }

    #[test]
    fn flamegraph_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stacks = [stack(&["Main.main", "Main.hot"], 90), stack(&["Main.main", "Main.cold"], 10)];
        write_flamegraph(&dir.join("f.svg"), &stacks, "CPU", "samples").unwrap();
        write_flamegraph(&dir.join("f.html"), &stacks, "CPU", "samples").unwrap();
        let svg = std::fs::read_to_string(dir.join("f.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("Main.hot"));
        let html = std::fs::read_to_string(dir.join("f.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>") && html.contains("Main.cold") && !html.contains("<?xml"));
    }
}
