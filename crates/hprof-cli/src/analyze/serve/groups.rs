//! Lists of nodes grouped by an owner (a class's instances, the objects that refer to an object), built
//! once in two passes over the graph as flat arrays, so that a drill-down reads one slice instead of
//! scanning millions of objects.

use crate::analyze::dominators::Analysed;

pub struct Groups {
    /// Owner `o`'s items are `list[start[o]..start[o + 1]]`, in the order they were given.
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Groups {
    /// Groups the `(owner, item)` pairs that `each` gives (it is called twice, giving the same pairs).
    fn build(owners: usize, each: impl Fn(&mut dyn FnMut(usize, u32))) -> Groups {
        let mut start = vec![0u32; owners + 1];
        each(&mut |o, _| start[o + 1] += 1);
        for i in 1..=owners {
            start[i] += start[i - 1];
        }
        let mut next: Vec<u32> = start[..owners].to_vec();
        let mut list = vec![0u32; start[owners] as usize];
        each(&mut |o, item| {
            list[next[o] as usize] = item;
            next[o] += 1;
        });
        Groups { start, list }
    }

    pub fn get(&self, owner: usize) -> &[u32] {
        match (self.start.get(owner), self.start.get(owner + 1)) {
            (Some(&s), Some(&e)) => &self.list[s as usize..e as usize],
            _ => &[],
        }
    }

    /// Each class's instances (by class index), biggest retained first (then in node order), as
    /// `Analysed::biggest` orders them.
    pub fn instances(an: &Analysed) -> Groups {
        let g = &an.graph;
        let mut groups = Groups::build(g.classes.classes.len(), |f| {
            for (v, &c) in g.class_of.iter().enumerate() {
                f(c as usize, v as u32);
            }
        });
        let retained = &an.tree.retained;
        for c in 0..g.classes.classes.len() {
            let (s, e) = (groups.start[c] as usize, groups.start[c + 1] as usize);
            groups.list[s..e].sort_unstable_by_key(|&v| (std::cmp::Reverse(retained[v as usize]), v));
        }
        groups
    }

    /// Each object's referrers (by node), in node order; one referring through two fields is listed twice.
    pub fn referrers(an: &Analysed) -> Groups {
        let g = &an.graph;
        Groups::build(g.len(), |f| {
            for v in 0..g.len() as u32 {
                for &w in g.refs(v) {
                    f(w as usize, v);
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_order_given() {
        let pairs = [(2, 10), (0, 11), (2, 12), (2, 12), (0, 13)];
        let g = Groups::build(4, |f| pairs.iter().for_each(|&(o, i)| f(o, i)));
        assert_eq!(g.get(0), &[11, 13]);
        assert_eq!(g.get(1), &[] as &[u32]);
        assert_eq!(g.get(2), &[10, 12, 12]);
        assert_eq!(g.get(3), &[] as &[u32]);
        assert_eq!(g.get(9), &[] as &[u32]);
    }
}
