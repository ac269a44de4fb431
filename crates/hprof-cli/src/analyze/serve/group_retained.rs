//! The retained size of a group of classes (a package, a class loader): what a collection would free if
//! every object of the group went. An object under another object of its group in the dominator tree is
//! already in that one's retained size, so only the group's outermost objects count — a sum without double
//! counting, found in one walk of the tree.

use hprof_analysis::dominators::DominatorTree;

/// No group: a class left out (by the filter).
pub const NONE: u32 = u32::MAX;

/// Each group's retained bytes; `group_of[c]` is class `c`'s group (`NONE`: in none). `None` when the tree
/// keeps no children lists.
pub fn group_retained(tree: &DominatorTree, class_of: &[u32], group_of: &[u32], groups: usize) -> Option<Vec<u64>> {
    let mut out = vec![0u64; groups];
    // How many objects of each group are on the path from the root to the object being visited.
    let mut open = vec![0u32; groups];
    let group = |v: u32| group_of.get(class_of[v as usize] as usize).copied().unwrap_or(NONE);
    // (object, leaving): an object of a group is left after its subtree, to close the group again.
    let mut stack: Vec<(u32, bool)> = tree.children_slice(None)?.iter().map(|&v| (v, false)).collect();
    while let Some((v, leaving)) = stack.pop() {
        let g = group(v);
        if leaving {
            open[g as usize] -= 1;
            continue;
        }
        if g != NONE {
            if open[g as usize] == 0 {
                out[g as usize] += tree.retained[v as usize];
            }
            open[g as usize] += 1;
            stack.push((v, true));
        }
        stack.extend(tree.children_slice(Some(v))?.iter().map(|&k| (k, false)));
    }
    Some(out)
}
