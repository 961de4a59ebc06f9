//! The path strategy's side of a bulk load: a node is its item alone (with the index key of
//! its level), as an insert writes it; each existing parent counts the load in its revision.

use super::PathTree;
use crate::error::Error;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::tree::bulk::{Forest, LoadPlan, LoadProblem};
use crate::tree::raw::rev_bump;
use crate::tree::{Hierarchy, TreePath, TreeProblem, node_sk, problem};

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// A problem of a load's input as a path tree's error.
    pub(super) fn load_problem(p: LoadProblem) -> Error {
        let parsed = |text: String| {
            TreePath::parse(&text).map_err(|problem| TreeProblem::Path { path: text, problem })
        };
        problem::<E>(match p {
            LoadProblem::Duplicate(node) => TreeProblem::Duplicate { node },
            LoadProblem::Missing(parent) => match parsed(parent) {
                Ok(parent) => TreeProblem::ParentMissing { parent },
                Err(p) => p,
            },
            // A path's parent is a prefix of it: paths never lead back.
            LoadProblem::Cycle(from, to) => match (parsed(from), parsed(to)) {
                (Ok(from), Ok(to)) => TreeProblem::IntoOwnSubtree { from, to },
                (Err(p), _) | (_, Err(p)) => p,
            },
        })
    }

    /// The rows of a load: see `Strategy::load_plan`.
    pub(super) async fn plan_load(&self, forest: &Forest<E>) -> Result<LoadPlan, Error> {
        // A load keeps the times a node holds (an import) and sets the unset ones.
        let stamp = self.db.stamp(false);
        let anchors: Vec<TreePath> = forest
            .anchors()
            .into_iter()
            .flatten()
            .map(|text| {
                TreePath::parse(&text).map_err(|problem| {
                    crate::tree::problem::<E>(TreeProblem::Path { path: text, problem })
                })
            })
            .collect::<Result<_, _>>()?;
        if !anchors.is_empty() {
            let keys = anchors.iter().map(|p| self.key(p));
            let found = self.db.batch_get(keys).consistent().send().await?;
            if let Some(i) = found.iter().position(Option::is_none) {
                return Err(Self::load_problem(LoadProblem::Missing(anchors[i].to_text())));
            }
        }
        let rows = forest
            .nodes
            .iter()
            .map(|node| to_item_at(node, next_version::<E>(node.version())?.1, stamp))
            .collect::<Result<Vec<_>, Error>>()?;
        let table = self.db.table_name();
        let finals = anchors
            .iter()
            .map(|p| rev_bump::<E>(table, &self.pk, node_sk::<E>(p)))
            .collect::<Result<_, Error>>()?;
        Ok(LoadPlan { rows, finals })
    }
}
