//! The folder models of the four strategies, and the part of the example written once over
//! [`TreeProtocol`]: two drives of folders, the archive, and a tree printed with
//! box-drawing lines. `tests/it/filesystem.rs` runs the same functions on every strategy and
//! checks that they print the same tree.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;

use ddb_model::TreePath;
use ddb_model::prelude::*;
use ddb_model::tree::{AdjacencyTree, ClosureTree, NestedTree, PathTree, TreeProtocol};
use serde::{Deserialize, Serialize};

/// A folder of the **path** strategy: the drive names the tree (the partition), the path is
/// the folder's address and its sort key, so a move changes the key of every folder it
/// moves. `#[hierarchy]` adds the children index (gsi1) and `Folder::tree(&db, drive)`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "DRIVE#<drive>", sk = "FOLDER#<path>")]
#[hierarchy(path = path, index = gsi1, max_depth = 32)]
pub struct Folder {
    pub drive: String,
    pub path: TreePath,
    #[serde(default)]
    pub files: u32,
}

/// Folders of the three strategies that address a folder by **id**: the id (the folder's
/// name, unique in the drive) is the sort key and never changes, and `parent` names the
/// folder it is in (`None` at the top level). The three models differ in one word of the
/// `#[hierarchy]` line: the strategy.
///
/// Closure: one copy of each folder under each ancestor, in the table (it reads no index:
/// `index` is accepted so that the line is the same).
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "DRIVE#<drive>", sk = "FOLDER#<id>")]
#[hierarchy(strategy = closure, parent = parent, index = gsi1, max_depth = 32)]
pub struct ClosureFolder {
    pub drive: String,
    pub id: String,
    pub parent: Option<String>,
    #[serde(default)]
    pub files: u32,
}

/// Adjacency list: the parent reference, and an index on it for the children.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "DRIVE#<drive>", sk = "FOLDER#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi1, max_depth = 32)]
pub struct AdjacencyFolder {
    pub drive: String,
    pub id: String,
    pub parent: Option<String>,
    #[serde(default)]
    pub files: u32,
}

/// Nested set: sparse intervals nested in the parent's, an index ordered by their start.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "DRIVE#<drive>", sk = "FOLDER#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1, max_depth = 32)]
pub struct NestedFolder {
    pub drive: String,
    pub id: String,
    pub parent: Option<String>,
    #[serde(default)]
    pub files: u32,
}

/// [`Named`] for an id folder: the id is the last segment of the path it was created at.
macro_rules! named_by_id {
    ($($node:ident),*) => {$(
        impl Named for $node {
            fn folder(drive: &str, path: &TreePath, files: u32) -> Self {
                let parent = path.parent().map(|p| p.name().to_owned());
                $node { drive: drive.into(), id: path.name().into(), parent, files }
            }

            fn name(&self) -> &str {
                &self.id
            }
        }
    )*};
}

named_by_id!(ClosureFolder, AdjacencyFolder, NestedFolder);

/// What the example needs of a folder beyond the tree protocol: how to make one from the
/// path a user would type, and the name to print.
pub trait Named: Sized {
    /// The folder at `path` on `drive`, holding `files` files.
    fn folder(drive: &str, path: &TreePath, files: u32) -> Self;
    /// The folder's name: the last segment of its path.
    fn name(&self) -> &str;
}

impl Named for Folder {
    fn folder(drive: &str, path: &TreePath, files: u32) -> Self {
        Folder { drive: drive.into(), path: path.clone(), files }
    }

    fn name(&self) -> &str {
        self.path.name()
    }
}

/// A drive: a tree of folders on one strategy, whose folders the example addresses by the
/// path a user would type.
pub trait Drive: TreeProtocol<Node: Named, Address: Eq + Hash> {
    /// The strategy's word in `#[hierarchy(..)]`.
    const STRATEGY: &'static str;

    /// The address of the folder that was created at `path`: the path itself (path
    /// strategy), or the folder's id, its name (id strategies).
    fn at(path: &TreePath) -> Self::Address;

    /// Writes many new folders, parents first.
    fn load(&self, folders: &[Self::Node]) -> impl Future<Output = Result<(), Error>> + Send;
}

impl Drive for PathTree<'_, Folder> {
    const STRATEGY: &'static str = "path";

    fn at(path: &TreePath) -> TreePath {
        path.clone()
    }

    /// Path nodes carry their whole address, so new folders can be written as plain items,
    /// 25 to a `BatchWriteItem`.
    async fn load(&self, folders: &[Folder]) -> Result<(), Error> {
        self.db().batch_put(folders).await
    }
}

macro_rules! id_drive {
    ($handle:ident, $node:ident, $word:literal) => {
        impl Drive for $handle<'_, $node> {
            const STRATEGY: &'static str = $word;

            fn at(path: &TreePath) -> String {
                path.name().to_owned()
            }

            /// One insert per folder: each checks its parent and writes the strategy's
            /// bookkeeping (copies, counters, intervals).
            async fn load(&self, folders: &[$node]) -> Result<(), Error> {
                for folder in folders {
                    TreeProtocol::insert(self, folder).await?;
                }
                Ok(())
            }
        }
    };
}

id_drive!(ClosureTree, ClosureFolder, "closure");
id_drive!(AdjacencyTree, AdjacencyFolder, "adjacency");
id_drive!(NestedTree, NestedFolder, "nested_set");

/// Parses a path of the example.
pub fn path(text: &str) -> Result<TreePath, Error> {
    Ok(text.parse()?)
}

/// The address on drive `D` of the folder created at `text`.
pub fn at<D: Drive>(text: &str) -> Result<D::Address, Error> {
    Ok(D::at(&path(text)?))
}

/// The folders of drives C and D, parents first.
pub const SEED: [&str; 15] = [
    "C",
    "C/I",
    "C/II",
    "D",
    "D/III",
    "D/III/a",
    "D/III/b",
    "D/IV",
    "D/IV/c",
    "D/V",
    "D/V/d",
    "D/V/d/i",
    "D/V/d/ii",
    "D/V/d/iii",
    "D/V/e",
];

/// Inserts the folders of [`SEED`] on `drive`, one insert each.
pub async fn build_seed<D: Drive>(tree: &D, drive: &str) -> Result<(), Error> {
    for p in SEED {
        tree.insert(&D::Node::folder(drive, &path(p)?, 0)).await?;
    }
    Ok(())
}

/// The folders of an archive under `root`: one per year of `years`, and twelve in each,
/// named `<year>-<month>`, parents first (the root itself not included).
pub fn archive<N: Named>(
    drive: &str,
    root: &TreePath,
    years: std::ops::Range<u32>,
) -> Result<Vec<N>, Error> {
    let mut out = Vec::new();
    for year in years {
        let y = root.child(year.to_string())?;
        out.push(N::folder(drive, &y, 0));
        for month in 1..=12 {
            out.push(N::folder(drive, &y.child(format!("{year}-{month:02}"))?, month));
        }
    }
    Ok(out)
}

/// The tree under the folder at `root` (or the whole drive) with box-drawing lines, one
/// folder a line, siblings by name: the same text on every strategy.
pub async fn render<D: Drive>(tree: &D, root: Option<&D::Address>) -> Result<String, Error> {
    let mut tops = Vec::new();
    let mut nodes = Vec::new();
    match root {
        Some(root) => {
            tops.extend(tree.get(root).await?);
            nodes.extend(tree.descendants(root).all().await?);
        }
        None => {
            for top in tree.roots().await? {
                nodes.extend(tree.descendants(&D::address(&top)).all().await?);
                tops.push(top);
            }
        }
    }
    let mut children: HashMap<D::Address, Vec<&D::Node>> = HashMap::new();
    for node in &nodes {
        if let Some(parent) = D::parent_address(node) {
            children.entry(parent).or_default().push(node);
        }
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| a.name().cmp(b.name()));
    }
    tops.sort_by(|a, b| a.name().cmp(b.name()));
    let mut out = String::new();
    for top in &tops {
        out.push_str(top.name());
        out.push('\n');
        branches::<D>(&children, &D::address(top), "", &mut out);
    }
    Ok(out)
}

/// The lines of the folders below `at`, each after `indent`.
fn branches<D: Drive>(
    children: &HashMap<D::Address, Vec<&D::Node>>,
    at: &D::Address,
    indent: &str,
    out: &mut String,
) {
    let Some(list) = children.get(at) else {
        return;
    };
    for (i, child) in list.iter().enumerate() {
        let last = i + 1 == list.len();
        out.push_str(indent);
        out.push_str(if last { "└── " } else { "├── " });
        out.push_str(child.name());
        out.push('\n');
        let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
        branches::<D>(children, &D::address(child), &deeper, out);
    }
}
