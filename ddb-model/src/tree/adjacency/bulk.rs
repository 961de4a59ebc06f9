//! The adjacency strategy's side of a bulk load: each node's item (with its parent-index
//! key) and its children counter, as inserts leave them; each existing parent counts its new
//! children.

use aws_sdk_dynamodb::types::AttributeValue;

use super::write::counter;
use super::{AdjacencyTree, TREE_KIDS_ATTR, index};
use crate::error::Error;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::ops::retry::Try;
use crate::tree::bulk::{Forest, LoadPlan, check_depth};
use crate::tree::node::IdHierarchy;

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    /// The rows of a load: see `Strategy::load_plan`.
    pub(super) async fn plan_load(&self, forest: &Forest<E>) -> Result<LoadPlan, Error> {
        // A load keeps the times a node holds (an import) and sets the unset ones.
        let stamp = self.db.stamp(false);
        let anchors: Vec<String> = forest.anchors().into_iter().flatten().collect();
        // Each existing parent and its ancestors: its depth, and its index key, which its
        // counter's update checks.
        let mut walks = Vec::with_capacity(anchors.len());
        for a in &anchors {
            let first = (0..forest.nodes.len())
                .find(|&i| forest.parent[i].is_none() && forest.anchor[i].as_deref() == Some(a))
                .map_or(a.as_str(), |i| forest.addrs[i].as_str());
            match self.walk_up(a, first, None).await? {
                Try::Done(walk) => walks.push(walk),
                Try::Again(err) => return Err(err),
            }
        }
        let depth_of = |a: Option<&str>| {
            a.and_then(|a| anchors.iter().position(|x| x == a))
                .and_then(|i| walks.get(i))
                .map_or(0, Vec::len)
        };
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let mut rows = Vec::with_capacity(forest.nodes.len());
        for (i, node) in forest.nodes.iter().enumerate() {
            let (_, next) = next_version::<E>(node.version())?;
            let mut item = to_item_at(node, next, stamp)?;
            if forest.kids[i] > 0 {
                item.insert(
                    TREE_KIDS_ATTR.to_owned(),
                    AttributeValue::N(forest.kids[i].to_string()),
                );
            }
            rows.push(item);
        }
        let table = self.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk);
        let mut finals = Vec::with_capacity(anchors.len());
        for (a, walk) in anchors.iter().zip(&walks) {
            let stored = walk.first().map(|raw| raw.index_sk.as_deref());
            let stored = sk_attr.zip(stored);
            let kids = i64::try_from(forest.roots_under(Some(a))).unwrap_or(i64::MAX);
            finals.push(counter::<E>(table, &self.pk, a, kids, 1, stored)?);
        }
        Ok(LoadPlan { rows, finals })
    }
}
