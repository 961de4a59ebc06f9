//! A nested-set delete of more than 96 nodes sends its nodes deepest intervals first, each
//! transaction with one counter update per parent outside it and the intent's check. A run
//! of 96 nodes in that order can have as many parents outside it as the subtree is deep, so
//! a fixed 96 nodes per transaction made a deep subtree's delete send more than 100 actions,
//! which the service refuses (found from outside by the cost benchmarks). The delete packs
//! its transactions by actions now; this is the test that found it.

use ddb_model::tree::NestedTree;

use crate::model::Nest;
use crate::support::db;

#[tokio::test]
async fn deep_nested_delete_fits_its_transactions() {
    let db = db::<ddb_model::DefaultTable>().await;
    let tree: NestedTree<'_, Nest> = Nest::tree(&db, "deep");
    // x, then a chain c1..c7 below it (each chain node the first child of its parent, so
    // the lowest interval), then 20 leaves under x and under every chain node: 168 nodes.
    // In the delete's order (deepest intervals first: x's leaves, c1's, c2's, ...) the first
    // transaction's 96 nodes are the leaves of x, c1, c2, c3 and 16 of c4's: 5 parents
    // outside it, 96 + 5 + 1 = 102 actions.
    tree.insert(&Nest::new("deep", "x", None)).await.expect("x");
    let mut parent = "x".to_owned();
    let mut parents = vec![parent.clone()];
    for i in 1..=7 {
        let id = format!("c{i}");
        tree.insert(&Nest::new("deep", &id, Some(&parent))).await.expect("chain");
        parents.push(id.clone());
        parent = id;
    }
    let mut leaves = Vec::new();
    for p in &parents {
        for j in 0..20 {
            leaves.push(Nest::new("deep", &format!("{p}-leaf{j}"), Some(p)));
        }
    }
    tree.bulk_load(leaves).await.expect("leaves");
    assert_eq!(tree.subtree_size("x").await.expect("size"), 168);
    let report = tree.delete_subtree("x").await.expect("a valid subtree is deleted");
    assert_eq!(report.nodes, 168);
    assert_eq!(tree.subtree_size("x").await.expect("size"), 0);
}
