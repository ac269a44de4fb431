//! Small files built here, with answers known by hand: dominators of a textbook graph, weak referents,
//! unknown vendor records, 4-byte ids.

use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::heap::{HeapGraph, histogram};
use hprof_analysis::paths::{shortest_path, shortest_paths};
use hprof_analysis::source::Source;
use hprof_analysis::{Dump, Quiet};
use hprof_format::binary::{Body, RecordWriter};
use hprof_format::tags::{BasicType, heap as sub};

const NODE_CLASS: u64 = 0x100;
const REF_CLASS: u64 = 0x200;
const OBJ_CLASS: u64 = 0x300;

/// A file with classes Node (fields l, r: Object), java.lang.ref.Reference (referent, other) and
/// java.lang.Object; `nodes` are (id, l, r) Node instances, `refs` (id, referent, other) References,
/// `roots` JNI global roots; an unknown record 0x7F sits between the strings and the classes.
fn file(id_size: u32, nodes: &[(u64, u64, u64)], refs: &[(u64, u64, u64)], roots: &[u64]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.2", id_size, 0).unwrap();
    for (id, s) in [
        (1, "Node"),
        (2, "java/lang/ref/Reference"),
        (3, "java/lang/Object"),
        (4, "l"),
        (5, "r"),
        (6, "referent"),
        (7, "other"),
    ] {
        w.utf8(id, s).unwrap();
    }
    w.record(0x7F, &[1, 2, 3]).unwrap();
    w.load_class(1, NODE_CLASS, 0, 1).unwrap();
    w.load_class(2, REF_CLASS, 0, 2).unwrap();
    w.load_class(3, OBJ_CLASS, 0, 3).unwrap();
    let mut b = Body::new(id_size);
    let class = |b: &mut Body, id: u64, sup: u64, fields: &[u64]| {
        b.u1(sub::CLASS_DUMP).id(id).u4(0).id(sup).id(0).id(0).id(0).id(0).id(0).u4(fields.len() as u32 * id_size);
        b.u2(0).u2(0).u2(fields.len() as u16);
        for &f in fields {
            b.id(f).u1(BasicType::Object as u8);
        }
    };
    class(&mut b, OBJ_CLASS, 0, &[]);
    class(&mut b, NODE_CLASS, OBJ_CLASS, &[4, 5]);
    class(&mut b, REF_CLASS, OBJ_CLASS, &[6, 7]);
    for c in [OBJ_CLASS, NODE_CLASS, REF_CLASS] {
        b.u1(sub::ROOT_STICKY_CLASS).id(c);
    }
    for &r in roots {
        b.u1(sub::ROOT_JNI_GLOBAL).id(r).id(0);
    }
    for &(id, l, r) in nodes {
        b.u1(sub::INSTANCE_DUMP).id(id).u4(0).id(NODE_CLASS).u4(2 * id_size).id(l).id(r);
    }
    for &(id, referent, other) in refs {
        b.u1(sub::INSTANCE_DUMP).id(id).u4(0).id(REF_CLASS).u4(2 * id_size).id(referent).id(other);
    }
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

fn open(bytes: Vec<u8>) -> Dump {
    Dump::from_source(Source::from_vec(bytes), &Quiet).unwrap()
}

#[test]
fn textbook_dominators_and_retained_sizes() {
    // A → B, C; B → D; C → D; D → E; E → A (a back edge). A is the only root.
    for id_size in [4, 8] {
        let (a, b, c, d, e) = (0x1000, 0x1010, 0x1020, 0x1030, 0x1040);
        let d_ = open(file(id_size, &[(a, b, c), (b, d, 0), (c, d, 0), (d, e, 0), (e, a, 0)], &[], &[a]));
        assert!(d_.notes.iter().any(|n| n.contains("0x7F")), "{:?}", d_.notes);
        assert!(d_.damage.is_none());
        let g = HeapGraph::build(&d_, true, &Quiet).unwrap();
        let t = DominatorTree::compute(&g, &Quiet).unwrap();
        let n = |id| g.node(id).unwrap();
        let idom = |id| t.idom[n(id) as usize];
        assert_eq!(idom(a), DominatorTree::ROOT);
        assert_eq!(idom(b), n(a));
        assert_eq!(idom(c), n(a));
        assert_eq!(idom(d), n(a), "D has two paths, through B and C");
        assert_eq!(idom(e), n(d));
        let size = g.shallow[n(a) as usize] as u64;
        assert_eq!(t.retained[n(a) as usize], 5 * size);
        assert_eq!(t.retained[n(d) as usize], 2 * size);
        assert_eq!(t.retained[n(b) as usize], size);
        // Shortest path to E: A → B → D → E (or via C), with field names.
        let p = shortest_path(&g, n(e)).unwrap();
        assert_eq!(p.nodes.len(), 4);
        assert_eq!(g.edge_label(&d_, p.nodes[2], p.nodes[3]).as_deref(), Some("l"));
        // D's holders are B and C: one shortest path through each; A, the root, is a path by itself.
        let through: Vec<u32> = shortest_paths(&g, n(d), 5).iter().map(|p| p.nodes[p.nodes.len() - 2]).collect();
        assert_eq!(through, vec![n(b), n(c)]);
        assert!(shortest_paths(&g, n(d), 5).iter().all(|p| p.nodes.len() == 3 && p.nodes[0] == n(a)));
        assert_eq!(shortest_paths(&g, n(d), 1).len(), 1);
        // A is a root: its path is itself (references to roots are left out of the graph).
        let to_a = shortest_paths(&g, n(a), 5);
        assert_eq!(to_a.iter().map(|p| p.nodes.clone()).collect::<Vec<_>>(), vec![vec![n(a)]]);
        // Sizes: 32-bit header 8 + two 4-byte refs = 16. On 64 bits the objects sit 16 bytes apart, which
        // only compact object headers (8 + 4 + 4) explain: the neighbours choose that layout.
        assert_eq!(size, 16);
        if id_size == 8 {
            assert_eq!(
                g.layout.kind,
                hprof_analysis::layout::LayoutKind::CompactHeaders,
                "{}",
                g.layout_choice.describe()
            );
        }
        let h = histogram(&d_, &Quiet).unwrap();
        let node_row = h.rows.iter().find(|r| r.class_name == "Node").unwrap();
        assert_eq!((node_row.instances, node_row.shallow_bytes), (5, 5 * size));
    }
}

#[test]
fn weak_referents_are_not_retained_and_weakly_reachable_objects_are_unreachable() {
    let (holder, weak, target, strong) = (0x10, 0x20, 0x30, 0x40);
    // holder.l → weak (a Reference whose referent is target and other is strong).
    let d = open(file(8, &[(holder, weak, 0), (target, 0, 0), (strong, 0, 0)], &[(weak, target, strong)], &[holder]));
    let g = HeapGraph::build(&d, false, &Quiet).unwrap();
    let t = DominatorTree::compute(&g, &Quiet).unwrap();
    let n = |id| g.node(id).unwrap();
    assert_eq!(t.idom[n(strong) as usize], n(weak), "the strong field of a Reference retains");
    assert!(t.is_reachable(n(strong)));
    assert!(!t.is_reachable(n(target)), "only weakly reachable");
    assert_eq!(t.idom[n(target) as usize], DominatorTree::UNREACHABLE, "left out of the tree, retained by no one");
    assert_eq!(t.retained[n(target) as usize], 0);
    assert_eq!(t.retained[n(weak) as usize], (g.shallow[n(weak) as usize] + g.shallow[n(strong) as usize]) as u64);
    // --keep-unreachable: under the super-root.
    let t = DominatorTree::compute_with(&g, hprof_analysis::dominators::Unreachable::Kept, &Quiet).unwrap();
    assert_eq!(t.idom[n(target) as usize], DominatorTree::ROOT, "listed under <unreachable>, retained by no one");
    assert_eq!(t.retained[n(weak) as usize], (g.shallow[n(weak) as usize] + g.shallow[n(strong) as usize]) as u64);
}

#[test]
fn truncated_segment_gives_partial_results_and_an_offset() {
    let bytes = file(8, &[(0x10, 0x20, 0), (0x20, 0, 0)], &[], &[0x10]);
    let cut = bytes[..bytes.len() - 20].to_vec();
    let d = open(cut);
    let e = d.damage.clone().expect("damage");
    assert!(e.message.contains("HEAP DUMP SEGMENT"), "{e}");
    let h = histogram(&d, &Quiet).unwrap();
    assert!(h.damage.is_some());
    assert!(h.counts.classes == 3 && h.counts.instances >= 1, "{:?}", h.counts);
}

#[test]
fn a_text_report_and_empty_files_are_refused_clearly() {
    let text = b"JAVA PROFILE 1.0.1, created Tue Nov 24 23:24:50 2026\n\nThis file holds...".to_vec();
    match Dump::from_source(Source::from_vec(text), &Quiet) {
        Err(hprof_analysis::Error::NotHprof(m)) => assert!(m.contains("text report"), "{m}"),
        other => panic!("accepted: {:?}", other.err()),
    }
    for bytes in [Vec::new(), b"JAVA PROFILE 1.0.2\0".to_vec(), vec![0x1f, 0x8b]] {
        assert!(Dump::from_source(Source::from_vec(bytes), &Quiet).is_err());
    }
}

#[test]
fn no_path_passes_through_its_own_target() {
    // A (root) → T; T → B; B → T. B refers to T but is held only through T: not a holder that keeps T.
    let (a, t, b) = (0x10, 0x20, 0x30);
    let d = open(file(8, &[(a, t, 0), (t, b, 0), (b, t, 0)], &[], &[a]));
    let g = HeapGraph::build(&d, false, &Quiet).unwrap();
    let n = |id| g.node(id).unwrap();
    let paths = shortest_paths(&g, n(t), 5);
    assert_eq!(paths.iter().map(|p| p.nodes.clone()).collect::<Vec<_>>(), vec![vec![n(a), n(t)]]);
    for p in &paths {
        assert_eq!(p.nodes.iter().filter(|&&v| v == n(t)).count(), 1, "{:?}", p.nodes);
    }
}

/// Inherited fields are walked class by class: a subclass's own block first, then each superclass's
/// (skipping classes without fields), with the names on path steps; a superclass cycle (hostile) ends the
/// walk instead of looping.
#[test]
fn inherited_fields_are_walked_along_the_superclass_chain_and_cycles_end() {
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.2", 8, 0).unwrap();
    for (id, s) in [(1, "java/lang/Object"), (2, "Base"), (3, "Empty"), (4, "Leaf"), (5, "a"), (6, "n"), (7, "b")] {
        w.utf8(id, s).unwrap();
    }
    w.utf8(8, "Loop1").unwrap();
    w.utf8(9, "Loop2").unwrap();
    for (serial, id, name) in [(1, 0x100, 1), (2, 0x200, 2), (3, 0x300, 3), (4, 0x400, 4), (5, 0x500, 8), (6, 0x600, 9)]
    {
        w.load_class(serial, id, 0, name).unwrap();
    }
    let mut b = Body::new(8);
    let class = |b: &mut Body, id: u64, sup: u64, fields: &[(u64, BasicType)]| {
        b.u1(sub::CLASS_DUMP).id(id).u4(0).id(sup).id(0).id(0).id(0).id(0).id(0).u4(0).u2(0).u2(0);
        b.u2(fields.len() as u16);
        for &(n, t) in fields {
            b.id(n).u1(t as u8);
        }
    };
    class(&mut b, 0x100, 0, &[]);
    // Base { Object a; int n }  <- Empty {}  <- Leaf { Object b }
    class(&mut b, 0x200, 0x100, &[(5, BasicType::Object), (6, BasicType::Int)]);
    class(&mut b, 0x300, 0x200, &[]);
    class(&mut b, 0x400, 0x300, &[(7, BasicType::Object)]);
    // Loop1 extends Loop2 extends Loop1, each with one reference.
    class(&mut b, 0x500, 0x600, &[(5, BasicType::Object)]);
    class(&mut b, 0x600, 0x500, &[(7, BasicType::Object)]);
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x1000).id(0);
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x5000).id(0);
    // Leaf values: its own b, then Base's a and n. b -> 0x2000, a -> 0x3000.
    b.u1(sub::INSTANCE_DUMP).id(0x1000).u4(0).id(0x400).u4(20).id(0x2000).id(0x3000).u4(7);
    for id in [0x2000u64, 0x3000, 0x6000, 0x7000] {
        b.u1(sub::INSTANCE_DUMP).id(id).u4(0).id(0x100).u4(0);
    }
    b.u1(sub::INSTANCE_DUMP).id(0x5000).u4(0).id(0x500).u4(16).id(0x6000).id(0x7000);
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    let d = open(w.into_inner());
    let g = HeapGraph::build(&d, true, &Quiet).unwrap();
    let label = |from: u64, to: u64| {
        let p = shortest_path(&g, g.node(to).unwrap()).unwrap();
        assert_eq!(p.nodes.len(), 2, "{to:x} is one step from its root");
        assert_eq!(g.ids.get(p.nodes[0]), from);
        g.edge_label(&d, p.nodes[0], p.nodes[1])
    };
    assert_eq!(label(0x1000, 0x2000).as_deref(), Some("b"));
    assert_eq!(label(0x1000, 0x3000).as_deref(), Some("a"));
    // The cycle: both blocks read once, in order, then the walk ends.
    assert_eq!(label(0x5000, 0x6000).as_deref(), Some("a"));
    assert_eq!(label(0x5000, 0x7000).as_deref(), Some("b"));
    let leaf = g.classes.get(0x400).unwrap();
    assert_eq!(leaf.field_bytes, 20);
    assert_eq!(g.classes.get(0x500).unwrap().field_bytes + g.classes.get(0x600).unwrap().field_bytes, 8 + 16);
}
