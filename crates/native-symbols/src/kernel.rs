//! Names for kernel addresses (the perf call chains' kernel frames), from `/proc/kallsyms`: read once, on
//! the first kernel frame. Where the kernel hides its addresses from this process (`kptr_restrict`), every
//! symbol reads as address 0 and frames are named `[kernel]`.

/// The kernel's text symbols, sorted by address.
#[derive(Default)]
pub struct KernelSymbols {
    symbols: Vec<(u64, String)>,
}

impl KernelSymbols {
    /// The process's copy, read on first use (by whichever thread comes first: see `preload`).
    pub fn shared() -> &'static KernelSymbols {
        static SHARED: std::sync::OnceLock<KernelSymbols> = std::sync::OnceLock::new();
        SHARED.get_or_init(KernelSymbols::load)
    }

    /// Reads `/proc/kallsyms`; empty where it cannot be read or shows no addresses.
    pub fn load() -> KernelSymbols {
        std::fs::read_to_string("/proc/kallsyms").map(|text| Self::parse(&text)).unwrap_or_default()
    }

    /// `address type name [module]` lines; text symbols (t, T, w, W) only.
    pub fn parse(text: &str) -> KernelSymbols {
        let mut symbols: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                (address != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| (address, name.to_owned()))
            })
            .collect();
        symbols.sort_unstable();
        KernelSymbols { symbols }
    }

    /// Whether any address was visible.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The kernel function holding `address`, as profilers mark kernel frames: `name_[k]`.
    pub fn name(&self, address: u64) -> String {
        let i = self.symbols.partition_point(|(at, _)| *at <= address);
        match i.checked_sub(1) {
            Some(i) => format!("{}_[k]", self.symbols[i].1),
            None => "[kernel]".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KernelSymbols;

    #[test]
    fn addresses_are_named_by_the_text_symbol_below_them() {
        let k = KernelSymbols::parse(
            "ffffffff81000000 T _stext\nffffffff81200000 t pipe_read\nffffffff81200400 d some_data\n\
             ffffffff81300000 T ksys_read\n0000000000000000 T hidden\n",
        );
        assert_eq!(k.name(0xffffffff81200010), "pipe_read_[k]");
        assert_eq!(k.name(0xffffffff81300001), "ksys_read_[k]");
        assert_eq!(k.name(0x1000), "[kernel]");
        assert!(KernelSymbols::parse("0000000000000000 T a\n").is_empty(), "hidden addresses");
    }
}
