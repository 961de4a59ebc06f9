//! The filesystem example (`examples/filesystem`) prints the same trees on all four
//! strategies: the example's own models and functions, run on each, compared with each other
//! and with the tree written out by hand.

#[path = "../../examples/filesystem/drive.rs"]
#[allow(dead_code)]
mod drive;

use ddb_model::{DefaultTable, Error};

use crate::support::db;
use drive::{
    AdjacencyFolder, ClosureFolder, Drive, Folder, Named, NestedFolder, archive, at, build_seed,
    path, render,
};

const DRIVE: &str = "d1";

/// What the example prints of the tree at each step, on one strategy: the seed drives, after
/// a small move, the moved subtree, after an archive was moved through the resumable
/// protocol (where the strategy has one) and a folder deleted; and the breadcrumbs.
async fn tour<D: Drive>(tree: &D) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    build_seed(tree, DRIVE).await?;
    out.push(render(tree, None).await?);
    tree.move_under(&at::<D>("D/III")?, &at::<D>("C")?).await?;
    out.push(render(tree, None).await?);
    out.push(render(tree, Some(&at::<D>("C/III")?)).await?);
    let root = path("D/V/archive")?;
    tree.insert(&D::Node::folder(DRIVE, &root, 0)).await?;
    tree.load(&archive(DRIVE, &root, 2019..2022)?).await?;
    let report = tree.move_under(&D::at(&root), &at::<D>("C")?).transaction_limit(0).await?;
    out.push(format!("resumable: {}", report.resumable || D::STRATEGY == "adjacency"));
    tree.delete_subtree(&at::<D>("C/I")?).await?;
    out.push(render(tree, None).await?);
    let crumbs = tree.breadcrumbs(&at::<D>("C/archive/2020/2020-07")?).await?;
    out.push(crumbs.iter().map(Named::name).collect::<Vec<_>>().join(" > "));
    Ok(out)
}

const SEED_TREE: &str = "\
C
├── I
└── II
D
├── III
│   ├── a
│   └── b
├── IV
│   └── c
└── V
    ├── d
    │   ├── i
    │   ├── ii
    │   └── iii
    └── e
";

#[tokio::test]
async fn the_four_strategies_print_the_same_trees() -> Result<(), Error> {
    let store = db::<DefaultTable>().await;
    let path = tour(&Folder::tree(&store, DRIVE)).await?;
    assert_eq!(path[0], SEED_TREE);
    assert!(path[1].starts_with("C\n├── I\n├── II\n└── III\n    ├── a\n    └── b\nD\n├── IV\n"));
    assert_eq!(path[2], "III\n├── a\n└── b\n");
    assert_eq!(path[3], "resumable: true");
    let last = &path[4];
    assert!(
        last.starts_with("C\n├── II\n├── III\n│   ├── a\n│   └── b\n└── archive\n    ├── 2019\n")
    );
    assert!(last.contains("    └── 2021\n        ├── 2021-01\n"));
    assert!(last.ends_with("        └── 2021-12\nD\n├── IV\n│   └── c\n└── V\n    ├── d\n    │   ├── i\n    │   ├── ii\n    │   └── iii\n    └── e\n"));
    assert_eq!(last.lines().count(), 6 + 3 * 13 + 9);
    assert_eq!(path[5], "C > archive > 2020 > 2020-07");

    let store = db::<DefaultTable>().await;
    assert_eq!(tour(&ClosureFolder::tree(&store, DRIVE)).await?, path, "closure");
    let store = db::<DefaultTable>().await;
    assert_eq!(tour(&AdjacencyFolder::tree(&store, DRIVE)).await?, path, "adjacency");
    let store = db::<DefaultTable>().await;
    assert_eq!(tour(&NestedFolder::tree(&store, DRIVE)).await?, path, "nested_set");
    Ok(())
}
