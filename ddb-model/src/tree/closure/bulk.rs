//! The closure strategy's side of a bulk load: each node's entity item, its own copy (its
//! ancestors and revision) and one copy under each ancestor and under the tree, as an
//! insert writes them; each existing parent counts the load in its own copy's revision.

use std::collections::HashMap;

use super::write::{bump_own, copy_sks};
use super::{ClosureTree, Own, copy_base, copy_item, copy_sk, own_copy, rev_from};
use crate::error::Error;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::tree::bulk::{Forest, LoadPlan, LoadProblem, check_depth};
use crate::tree::node::IdHierarchy;

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// The rows of a load: see `Strategy::load_plan`.
    pub(super) async fn plan_load(
        &self,
        forest: &Forest<E>,
        token: &str,
    ) -> Result<LoadPlan, Error> {
        // A load keeps the times a node holds (an import) and sets the unset ones.
        let stamp = self.db.stamp(false);
        let anchors: Vec<String> = forest.anchors().into_iter().flatten().collect();
        let owns = futures_util::future::try_join_all(anchors.iter().map(|a| self.own(a))).await?;
        let mut above: HashMap<&str, Own<E>> = HashMap::new();
        for (a, own) in anchors.iter().zip(owns) {
            match own {
                Some(own) => above.insert(a.as_str(), own),
                None => {
                    return Err(crate::tree::bulk::id_problem::<E>(LoadProblem::Missing(
                        a.clone(),
                    )));
                }
            };
        }
        let depth_of = |a: Option<&str>| a.and_then(|a| above.get(a)).map_or(0, Own::depth);
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let rev = rev_from(token);
        let mut chains: Vec<Vec<String>> = Vec::with_capacity(forest.nodes.len());
        let mut rows = Vec::new();
        for (i, node) in forest.nodes.iter().enumerate() {
            let chain = match (forest.parent[i], forest.anchor[i].as_deref()) {
                (Some(p), _) => [chains[p].as_slice(), &[forest.addrs[p].clone()]].concat(),
                (None, Some(a)) => {
                    let own = above.get(a).map(|own| own.chain.clone()).unwrap_or_default();
                    [own, vec![a.to_owned()]].concat()
                }
                (None, None) => Vec::new(),
            };
            let id = &forest.addrs[i];
            let (_, next) = next_version::<E>(node.version())?;
            let base = copy_base(node, next, Some(stamp))?;
            rows.push(to_item_at(node, next, stamp)?);
            rows.push(own_copy::<E>(&base, id, &chain, rev)?);
            for sk in copy_sks::<E>(&chain, id) {
                rows.push(copy_item::<E>(&base, sk)?);
            }
            chains.push(chain);
        }
        let table = self.db.table_name();
        let finals = anchors
            .iter()
            .filter_map(|a| above.get(a.as_str()).map(|own| (a, own)))
            .map(|(a, own)| {
                bump_own::<E>(table, &self.pk, copy_sk::<E>(Some(a), 0, a), &own.chain_text)
            })
            .collect::<Result<_, Error>>()?;
        Ok(LoadPlan { rows, finals })
    }
}
