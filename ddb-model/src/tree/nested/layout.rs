//! The numbering of a nested-set tree, as pure functions: where a new child goes in its
//! parent's gap, and how a region is numbered again when a gap is exhausted.
//!
//! Every node has an interval `[lft, rgt]` (`lft < rgt`) strictly inside its parent's, its
//! siblings' intervals are disjoint and ordered, and `next` (the high-water mark, `lft` for
//! a node without children) is where the last child allocated so far ends: the numbers in
//! `(next, rgt)` are free. The top level is the interval `[0, u64::MAX]` of no node.

use crate::tree::op::WHOLE_TREE;

/// The interval of the top level (the tree itself).
pub(crate) const TOP: (u64, u64) = (0, u64::MAX);

/// A new child takes `1 / SHARE` of the free numbers of its parent's gap (at least 2), so
/// that later children, and the new child's own children, find room; a first child takes
/// half.
const SHARE: u64 = 8;

/// The numbers of a node: its interval and its high-water mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Numbers {
    pub lft: u64,
    pub rgt: u64,
    pub next: u64,
}

/// The interval of a new child of a node whose free numbers are `(next, rgt)` (`first`: it
/// has no child yet); `None` when fewer than two are free (the gap is exhausted).
pub(crate) fn slot(next: u64, rgt: u64, first: bool) -> Option<(u64, u64)> {
    let room = rgt.checked_sub(next)?.checked_sub(1)?;
    if room < 2 {
        return None;
    }
    // The first child takes half (chains go deep), the later ones an eighth of what is left.
    let share = if first { room / 2 } else { room / SHARE };
    let width = share.max(2);
    Some((next + 1, next + width))
}

/// The smallest width a subtree of `size` nodes can be numbered in: two numbers per node.
pub(crate) fn need(size: u64) -> u128 {
    u128::from(size) * 2
}

/// True when a region whose root has interval `(lft, rgt)` and `below` nodes under it is
/// worth numbering again with `extra` more numbers kept free: at least three quarters of
/// its inner numbers stay free, so the next renumbering of it is far away.
pub(crate) fn has_room(lft: u64, rgt: u64, below: u64, extra: u128) -> bool {
    let inner = u128::from(rgt.saturating_sub(lft)).saturating_sub(1);
    inner >= ROOM * (need(below) + extra)
}

/// How much larger than its need a region must be to be numbered again: a quarter full at
/// most, so that renumberings are rare.
const ROOM: u128 = 4;

/// Numbers a region again: `children[i]` are the children of node `i` in order (node 0 is
/// the region's root, which keeps its interval `(lft, rgt)`). Each node's width is its
/// subtree's need (two numbers per node) scaled by the density of its parent, so every
/// node keeps free numbers after its last child in proportion to the region's room.
/// `None` when the region does not fit (or `children` names a node twice or a node that
/// does not exist).
#[cfg(test)]
pub(crate) fn lay_out(children: &[Vec<usize>], lft: u64, rgt: u64) -> Option<Vec<Numbers>> {
    lay_out_reserving(children, &[], lft, rgt)
}

/// [`lay_out`] keeping at least `reserve[i]` numbers free after the last child of node `i`
/// (room for a subtree about to move there).
pub(crate) fn lay_out_reserving(
    children: &[Vec<usize>],
    reserve: &[u128],
    lft: u64,
    rgt: u64,
) -> Option<Vec<Numbers>> {
    let n = children.len();
    if n == 0 || lft >= rgt {
        return None;
    }
    // Subtree sizes, children before parents (an explicit order: no recursion).
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(i) = stack.pop() {
        order.push(i);
        for &c in children.get(i)? {
            if *seen.get(c)? {
                return None;
            }
            seen[c] = true;
            stack.push(c);
        }
    }
    // What each subtree needs: two numbers per node and the numbers kept free in it.
    let mut needs = vec![0u128; n];
    for &i in order.iter().rev() {
        let kept = reserve.get(i).copied().unwrap_or(0);
        needs[i] = need(1) + kept + children[i].iter().map(|&c| needs[c]).sum::<u128>();
    }
    let mut out = vec![Numbers { lft: 0, rgt: 0, next: 0 }; n];
    out[0] = Numbers { lft, rgt, next: lft };
    for &i in &order {
        let Numbers { lft: l, rgt: r, .. } = out[i];
        if children[i].is_empty() {
            continue;
        }
        // Every child gets its need and a share of the surplus proportional to it; the
        // node's own share (as much as two numbers' need, and what is kept) stays free after
        // its last child. The surplus per need is the same at every depth, so every node of
        // a region with room keeps free numbers.
        let inner = u128::from(r - l) - 1;
        let kept = reserve.get(i).copied().unwrap_or(0);
        let wanted: u128 = children[i].iter().map(|&c| needs[c]).sum::<u128>() + kept;
        if inner < wanted {
            return None;
        }
        let surplus = inner - wanted;
        let denom = wanted + need(1);
        let mut at = u128::from(l);
        for &c in &children[i] {
            let width = needs[c] + surplus.checked_mul(needs[c])? / denom;
            let (cl, cr) = (at + 1, at + width);
            let (cl, cr) = (u64::try_from(cl).ok()?, u64::try_from(cr).ok()?);
            out[c] = Numbers { lft: cl, rgt: cr, next: cl };
            at += width;
        }
        out[i].next = u64::try_from(at).ok()?;
    }
    Some(out)
}

/// Where a node goes when a region is numbered again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub lft: u64,
    pub rgt: u64,
    pub next: u64,
    pub depth: usize,
    /// The ancestors, root first (escaped ids).
    pub chain: Vec<String>,
}

/// The root of a region numbered again: a node (its id, interval, depth and ancestors) or
/// the top level (`id: None`, [`TOP`], depth 0).
#[derive(Debug, Clone)]
pub(crate) struct Root {
    pub id: Option<String>,
    pub lft: u64,
    pub rgt: u64,
    pub depth: usize,
    pub chain: Vec<String>,
}

/// Numbers the region below `root` again: `members` are its nodes but the root, each with
/// its parent (`None`: the top level), in any order; siblings are laid out in id order, so
/// that the numbering is a function of the region's shape alone (a resumed renumbering
/// computes the same one). `reserve` keeps numbers free after the children of a node (of
/// the top level: `WHOLE_TREE`).
/// Returns the root's new high-water mark and each member's place; `None` when the region
/// does not fit the root's interval, or a member's parent is not in the region.
pub(crate) fn plan(
    root: &Root,
    members: &[(String, Option<String>)],
    reserve: Option<(&str, u128)>,
) -> Option<(u64, Vec<(String, Place)>)> {
    let mut ids: Vec<&str> = members.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() != members.len() {
        return None;
    }
    let slot = |id: &str| ids.binary_search(&id).ok().map(|i| i + 1);
    let mut children = vec![Vec::new(); members.len() + 1];
    let mut order: Vec<&(String, Option<String>)> = members.iter().collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (id, parent) in &order {
        let p = match (parent, &root.id) {
            (Some(p), Some(r)) if p == r => 0,
            (None, None) => 0,
            (Some(p), _) => slot(p)?,
            (None, Some(_)) => return None,
        };
        children[p].push(slot(id)?);
    }
    let mut kept = vec![0u128; members.len() + 1];
    if let Some((at, n)) = reserve {
        let at_root = match &root.id {
            Some(id) => id == at,
            None => at == WHOLE_TREE,
        };
        let i = if at_root { 0 } else { slot(at)? };
        kept[i] = n;
    }
    let nums = lay_out_reserving(&children, &kept, root.lft, root.rgt)?;
    // Depths and ancestors, parents first.
    let mut place: Vec<Option<(usize, Vec<String>)>> = vec![None; members.len() + 1];
    place[0] = Some((root.depth, root.chain.clone()));
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        let (depth, chain) = place[i].clone()?;
        let mut below = chain;
        if i == 0 {
            below.extend(root.id.iter().cloned());
        } else {
            below.push(ids[i - 1].to_owned());
        }
        for &c in &children[i] {
            place[c] = Some((depth + 1, below.clone()));
            stack.push(c);
        }
    }
    let mut out = Vec::with_capacity(members.len());
    for (i, id) in ids.iter().enumerate() {
        let (depth, chain) = place[i + 1].clone()?;
        let n = nums[i + 1];
        out.push(((*id).to_owned(), Place { lft: n.lft, rgt: n.rgt, next: n.next, depth, chain }));
    }
    Some((nums[0].next, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Checks the invariants of a numbering: intervals nested in their parents, siblings
    /// disjoint and in order, high-water marks between the last child and the end.
    fn valid(children: &[Vec<usize>], nums: &[Numbers]) -> Result<(), String> {
        for (i, kids) in children.iter().enumerate() {
            let p = nums[i];
            if p.lft >= p.rgt {
                return Err(format!("node {i}: empty interval {p:?}"));
            }
            let mut last = p.lft;
            for &c in kids {
                let k = nums[c];
                if k.lft <= last || k.rgt >= p.rgt {
                    return Err(format!("child {c} {k:?} of {i} {p:?} after {last}"));
                }
                last = k.rgt;
            }
            if p.next != last {
                return Err(format!("node {i}: next {} but last child ends at {last}", p.next));
            }
        }
        Ok(())
    }

    /// A random tree: node `i > 0` is a child of a node before it.
    fn tree(parents: &[usize]) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); parents.len() + 1];
        for (i, &p) in parents.iter().enumerate() {
            children[p % (i + 1)].push(i + 1);
        }
        children
    }

    #[test]
    fn slots_split_the_gap_and_stop_when_it_is_exhausted() {
        assert_eq!(slot(0, 100, false), Some((1, 12)));
        assert_eq!(slot(0, 100, true), Some((1, 49)));
        assert_eq!(slot(10, 13, false), Some((11, 12)));
        assert_eq!(slot(10, 12, true), None, "one free number is no interval");
        assert_eq!(slot(12, 12, false), None);
        assert_eq!(slot(13, 12, false), None, "a corrupt mark is no slot");
        assert_eq!(slot(0, u64::MAX, false), Some((1, u64::MAX / 8)));
    }

    #[test]
    fn a_chain_of_96_fits_exactly_and_no_tighter() {
        let chain: Vec<Vec<usize>> =
            (0..97).map(|i| if i < 96 { vec![i + 1] } else { vec![] }).collect();
        let nums = lay_out(&chain, 0, 193).expect("192 inner numbers for 96 nodes");
        valid(&chain, &nums).unwrap();
        assert_eq!(lay_out(&chain, 0, 192), None);
        assert!(!has_room(0, 193, 96, 0));
        assert!(!has_room(0, 385, 96, 0));
        assert!(has_room(0, 769, 96, 0));
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert_eq!(lay_out(&[], 0, 10), None);
        assert_eq!(lay_out(&[vec![1], vec![0]], 0, 100), None, "a cycle");
        assert_eq!(lay_out(&[vec![1, 1], vec![]], 0, 100), None, "a node twice");
        assert_eq!(lay_out(&[vec![5]], 0, 100), None, "a missing node");
        assert_eq!(lay_out(&[vec![]], 5, 5), None);
    }

    fn top() -> Root {
        Root { id: None, lft: TOP.0, rgt: TOP.1, depth: 0, chain: Vec::new() }
    }

    #[test]
    fn the_whole_tree_keeps_what_is_reserved_at_the_top_level() {
        // 300 top-level nodes, each with a child: numbered from their shape alone.
        let mut members: Vec<(String, Option<String>)> = Vec::new();
        for i in 0..300 {
            members.push((format!("t{i:03}"), None));
            members.push((format!("t{i:03}/c"), Some(format!("t{i:03}"))));
        }
        let (next, places) = plan(&top(), &members, Some((WHOLE_TREE, 1 << 62))).expect("fits");
        assert!(TOP.1 - next > 1 << 62, "the top level keeps its reserve: {next}");
        let last = places.iter().map(|(_, p)| p.rgt).max().expect("nodes");
        assert_eq!(next, last, "the mark is the last top-level interval's end");
        // The same shape in another order is the same numbering (a resumed run agrees).
        let mut shuffled = members.clone();
        shuffled.reverse();
        assert_eq!(plan(&top(), &shuffled, Some((WHOLE_TREE, 1 << 62))).map(|p| p.0), Some(next));
        // Without the reserve the top level keeps only its share.
        let (bare, _) = plan(&top(), &members, None).expect("fits");
        assert!(bare > next);
        // A reserve the numbers cannot hold does not fit.
        assert_eq!(plan(&top(), &members, Some((WHOLE_TREE, u128::from(u64::MAX)))), None);
    }

    #[test]
    fn a_tree_fits_two_numbers_per_node_and_no_fewer() {
        let members: Vec<(String, Option<String>)> =
            (0..50).map(|i| (format!("n{i:02}"), None)).collect();
        let tight = Root { id: None, lft: 0, rgt: 101, depth: 0, chain: Vec::new() };
        assert!(plan(&tight, &members, None).is_some(), "100 inner numbers for 50 nodes");
        let short = Root { rgt: 100, ..tight };
        assert_eq!(plan(&short, &members, None), None);
    }

    proptest! {
        #[test]
        fn layouts_are_valid_nested_sets(
            parents in prop::collection::vec(any::<usize>(), 0..200),
            lft in any::<u64>(),
            width in any::<u64>(),
        ) {
            let children = tree(&parents);
            let rgt = lft.saturating_add(width);
            match lay_out(&children, lft, rgt) {
                Some(nums) => {
                    prop_assert_eq!(nums[0].lft, lft);
                    prop_assert_eq!(nums[0].rgt, rgt);
                    prop_assert_eq!(valid(&children, &nums), Ok(()));
                    // With room, every node keeps free numbers after its children: an
                    // insert anywhere in the region finds a slot.
                    if has_room(lft, rgt, parents.len() as u64, 0) {
                        for (i, num) in nums.iter().enumerate() {
                            prop_assert!(slot(num.next, num.rgt, false).is_some(), "node {i}: {num:?}");
                        }
                    }
                }
                None => prop_assert!(
                    u128::from(rgt.saturating_sub(lft)) < need(parents.len() as u64) + 1
                ),
            }
        }

        #[test]
        fn slots_stay_inside_the_gap(next in any::<u64>(), rgt in any::<u64>(), first: bool) {
            if let Some((l, r)) = slot(next, rgt, first) {
                prop_assert!(next < l && l < r && r < rgt);
            } else {
                prop_assert!(rgt.saturating_sub(next) < 3);
            }
        }
    }
}
