//! The nested-set strategy's side of a bulk load: the nodes loaded under each existing
//! parent (or at the top level) are numbered together, evenly, inside a share of that
//! parent's free numbers (the share a moved subtree of their size takes), so every loaded
//! node keeps free numbers after its last child for later inserts; each existing parent's
//! high-water mark and children counter move once, in the load's last transaction.

use std::collections::HashMap;

use super::items::{move_slot, new_node_item};
use super::layout::{Place, Root, plan};
use super::{NestedTree, Raw};
use crate::error::Error;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::tree::bulk::{Forest, LoadPlan, LoadProblem, check_depth};
use crate::tree::node::{IdHierarchy, display};
use crate::tree::{TreeProblem, problem};

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    /// The rows of a load: see `Strategy::load_plan`.
    pub(super) async fn plan_load(&self, forest: &Forest<E>) -> Result<LoadPlan, Error> {
        // A load keeps the times a node holds (an import) and sets the unset ones.
        let stamp = self.db.stamp(false);
        let mut places: HashMap<String, Place> = HashMap::with_capacity(forest.nodes.len());
        let mut depths: HashMap<Option<String>, usize> = HashMap::new();
        let mut finals = Vec::new();
        for anchor in forest.anchors() {
            // The nodes numbered under this anchor, each with its parent.
            let members: Vec<(String, Option<String>)> = (0..forest.nodes.len())
                .filter(|&i| forest.anchor[i] == anchor)
                .map(|i| {
                    let parent = match forest.parent[i] {
                        Some(p) => Some(forest.addrs[p].clone()),
                        None => anchor.clone(),
                    };
                    (forest.addrs[i].clone(), parent)
                })
                .collect();
            let size = members.len();
            let no_room = || {
                problem::<E>(TreeProblem::NoRoom {
                    parent: anchor.as_deref().map(display),
                    nodes: size,
                })
            };
            let kids = i64::try_from(forest.roots_under(anchor.as_deref())).unwrap_or(i64::MAX);
            let (root, raw, top) = match &anchor {
                Some(a) => {
                    let Some(raw): Option<Raw<E>> = self.raw(a).await? else {
                        return Err(crate::tree::bulk::id_problem::<E>(LoadProblem::Missing(
                            a.clone(),
                        )));
                    };
                    let (lo, hi) =
                        move_slot((raw.next, raw.rgt), size, false).ok_or_else(no_room)?;
                    let rgt = hi.checked_add(1).ok_or_else(no_room)?;
                    let root = Root {
                        id: Some(a.clone()),
                        lft: lo - 1,
                        rgt,
                        depth: raw.depth,
                        chain: raw.chain.clone(),
                    };
                    (root, Some(raw), None)
                }
                None => {
                    let top = self.top().await?;
                    let (lo, hi) =
                        move_slot((top.next, u64::MAX), size, true).ok_or_else(no_room)?;
                    let rgt = hi.checked_add(1).ok_or_else(no_room)?;
                    let root = Root { id: None, lft: lo - 1, rgt, depth: 0, chain: Vec::new() };
                    (root, None, Some(top))
                }
            };
            depths.insert(anchor.clone(), root.depth);
            let (next, laid) = plan(&root, &members, None).ok_or_else(no_room)?;
            places.extend(laid);
            finals.push(self.gains(raw.as_ref(), &top.unwrap_or_default(), Some(next), kids)?);
        }
        let depth_of = |a: Option<&str>| depths.get(&a.map(str::to_owned)).copied().unwrap_or(0);
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let mut rows = Vec::with_capacity(forest.nodes.len());
        for (i, node) in forest.nodes.iter().enumerate() {
            let Some(place) = places.get(&forest.addrs[i]) else {
                return Err(problem::<E>(TreeProblem::NoRoom {
                    parent: forest.anchor[i].as_deref().map(display),
                    nodes: forest.nodes.len(),
                }));
            };
            let (_, version) = next_version::<E>(node.version())?;
            let base = to_item_at(node, version, stamp)?;
            rows.push(new_node_item::<E>(&base, place, forest.kids[i] as u64));
        }
        Ok(LoadPlan { rows, finals })
    }
}
