//! The path strategy's side of a bulk load: a node is its item alone (with the index key of
//! its level), as an insert writes it; each existing parent counts the load in its revision.

use super::PathTree;
use crate::Db;
use crate::error::Error;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::tree::bulk::{Forest, LoadPlan, LoadProblem, Loader};
use crate::tree::raw::{RawAction, rev_bump};
use crate::tree::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, op_sk, problem};

impl<'a, E: Hierarchy> Loader for PathTree<'a, E> {
    type LoadNode = E;

    fn bulk_db(&self) -> &Db<E::Table> {
        self.db
    }

    fn bulk_pk(&self) -> &str {
        &self.pk
    }

    fn bulk_op_sk() -> String {
        op_sk::<E>()
    }

    fn bulk_addr(node: &E) -> String {
        node.path().to_text()
    }

    fn bulk_parent(node: &E) -> Option<String> {
        node.path().parent().map(|p| p.to_text())
    }

    fn bulk_check(&self, node: &E) -> Result<(), Error> {
        check_path::<E>(node.path())
    }

    fn bulk_problem(p: LoadProblem) -> Error {
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

    async fn bulk_plan(&self, forest: &Forest<E>, _token: &str) -> Result<LoadPlan, Error> {
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
                return Err(Self::bulk_problem(LoadProblem::Missing(anchors[i].to_text())));
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
            .map(|p| {
                let sk = node_sk::<E>(p);
                let (item, size) = rev_bump::<E>(table, &self.pk, &sk)?;
                Ok(RawAction { sk, item, size })
            })
            .collect::<Result<_, Error>>()?;
        Ok(LoadPlan { rows, finals })
    }
}

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// Loads many new nodes at once, in any order (parents are written first), each under
    /// a parent path that is in the input or in the tree: `BatchWriteItem`s of 25 nodes
    /// under an intent record, no transaction per node. See [`BulkLoad`](crate::tree::BulkLoad)
    /// for the checks (nothing is written when one fails), the requests and recovery
    /// ([`resume`](PathTree::resume), [`rollback`](PathTree::rollback)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, TreePath, local};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
    /// #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
    /// #[hierarchy(path = path, index = gsi1)]
    /// struct Folder { drive: String, path: TreePath }
    ///
    /// let db = local::isolated_db().await?;
    /// let drive = Folder::tree(&db, "D");
    /// let folder = |p: &str| Folder { drive: "D".into(), path: p.parse().unwrap() };
    /// let mut nodes: Vec<Folder> = (0..60).map(|i| folder(&format!("docs/{i}"))).collect();
    /// nodes.push(folder("docs"));
    /// let report = drive.bulk_load(nodes).await?;
    /// assert_eq!(report.nodes, 61);
    /// assert_eq!(drive.children(&"docs".parse()?).all().await?.len(), 60);
    /// // 3 BatchWriteItem for the 61 nodes, 1 for the journal.
    /// assert_eq!(db.requests().get(ddb_model::Op::BatchWriteItem), 4);
    /// # Ok(()) }
    /// ```
    pub fn bulk_load(&self, nodes: impl IntoIterator<Item = E>) -> crate::tree::BulkLoad<'_, Self> {
        crate::tree::BulkLoad::new(self, nodes)
    }
}
