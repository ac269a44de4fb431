//! The string table both formats share the idea of: index 0 is "", each distinct string once.

use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct Strings {
    pub(crate) table: Vec<String>,
    ids: HashMap<String, usize>,
}

impl Strings {
    pub(crate) fn new() -> Strings {
        Strings { table: vec![String::new()], ids: HashMap::new() }
    }

    pub(crate) fn id(&mut self, s: &str) -> usize {
        if s.is_empty() {
            return 0;
        }
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        self.table.push(s.to_owned());
        self.ids.insert(s.to_owned(), self.table.len() - 1);
        self.table.len() - 1
    }
}
