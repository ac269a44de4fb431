//! Rewrites every `.class` under a directory into another, printing the methods it could not rewrite.
//! `cargo run --release -p classfile --example rewrite_dir -- IN OUT`

use std::path::Path;

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "class") {
            files.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (input, output) = (Path::new(&args[1]), Path::new(&args[2]));
    let mut files = Vec::new();
    walk(input, &mut files);
    let probes = classfile::Probes { class: "java/lang/HprofProbe", enter: "enter", exit: "exit" };
    let (mut classes, mut methods, mut skipped, mut refused) = (0, 0, 0, 0);
    let mut next = 0u32;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let out = output.join(f.strip_prefix(input).unwrap());
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        match classfile::instrument(&bytes, &probes, &mut |_, _| {
            next += 1;
            next
        }) {
            Ok(r) => {
                classes += 1;
                methods += r.methods.len();
                for (m, why) in &r.skipped {
                    if why != "native" {
                        skipped += 1;
                        println!("skipped {}.{}{}: {why}", r.class, m.name, m.descriptor);
                    }
                }
                std::fs::write(&out, &r.bytes).unwrap();
            }
            Err(e) => {
                refused += 1;
                println!("refused {}: {e}", f.display());
                std::fs::write(&out, &bytes).unwrap();
            }
        }
    }
    println!("{classes} classes rewritten ({methods} methods, {skipped} methods skipped), {refused} refused");
}
