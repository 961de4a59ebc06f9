//! Vector search: `#[table(vector(..))]` indexes, `#[vector(index)]` fields and
//! `E::nearest(&db, k, &vector)`.
//!
//! The embedded engine (dynoxide 3.2) has vector indexes and `SearchVectors`. DynamoDB Local
//! (3.x) has neither: it answers `SearchVectors` with `UnknownOperationException`, creates a
//! table without the vector indexes it is given, and refuses the type attribute's definition
//! that partitions them. There, every test here that needs a vector index prints why it is
//! skipped, from the service's answer (`Error::Unsupported` of `Capability::VectorSearch`), and
//! `unsupported_endpoint_is_a_typed_error` checks that answer.

use ddb_model::aws_sdk_dynamodb::types::{SearchSchemaElementType, VectorDistanceFunction};
use ddb_model::error::{TableMismatchReason, VectorProblem};
use ddb_model::prelude::*;
use ddb_model::{Op, Scored, entity::Metric, local};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

const DIMS: usize = 6;

#[derive(Table)]
#[table(
    name = "vectors",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    vector(name = "by_cosine", attr = "emb", dims = 6, metric = cosine),
    vector(name = "by_euclid", attr = "pos", dims = 6, metric = euclidean),
    vector(name = "by_dot", attr = "taste", dims = 6, metric = dot_product)
)]
struct Shop;

/// A document with a vector per metric (each in an index of its own).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Shop, pk = "DOC#<id>", sk = "DOC")]
#[index(gsi1, pk = "SHELF#<shelf>", sk = "DOC#<id>")]
struct Doc {
    id: String,
    shelf: String,
    #[vector(by_cosine)]
    emb: Vec<f32>,
    #[vector(by_euclid)]
    pos: Vec<f32>,
    #[vector(by_dot)]
    taste: Vec<f32>,
}

/// Another entity of the table, stored in the same vector attribute: never a result of
/// `Doc`'s searches, nor `Doc`s of its own.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Shop, pk = "NOTE#<id>", sk = "NOTE")]
struct Note {
    id: String,
    #[vector(by_cosine)]
    #[serde(rename = "emb")]
    embedding: Option<Vec<f32>>,
}

/// A table with one vector index, for the entity with one vector field (`nearest`).
#[derive(Table)]
#[table(
    name = "catalogue",
    vector(name = "by_look", attr = "look", dims = 3, metric = cosine, filters = ["title", "version": N])
)]
struct Catalogue;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Catalogue, pk = "ITEM#<id>", sk = "ITEM")]
struct Product {
    id: String,
    title: String,
    #[vector(by_look)]
    look: Option<Vec<f32>>,
    version: u32,
}

/// A filter declared with another type than the entity's field.
#[derive(Table)]
#[table(name = "labels", vector(name = "by_look", attr = "look", dims = 3, metric = cosine, filters = ["title": N]))]
struct Labels;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Labels, pk = "LABEL#<id>", sk = "LABEL")]
struct Label {
    id: String,
    title: String,
    #[vector(by_look)]
    look: Vec<f32>,
}

/// A fresh table laid out as `T`; `None` (with the reason printed) on an endpoint without
/// vector search, as its answer says.
async fn vector_db<T: Table>() -> Option<Db<T>> {
    match local::isolated_db::<T>().await {
        Ok(db) => Some(db),
        Err(e) if e.is_vector_search_unsupported() => {
            eprintln!("skipped, the endpoint has no vector search: {e}");
            None
        }
        Err(e) => panic!("cannot create a test table: {e}"),
    }
}

fn doc(id: &str, emb: [f32; DIMS], pos: [f32; DIMS], taste: [f32; DIMS]) -> Doc {
    Doc {
        id: id.into(),
        shelf: "a".into(),
        emb: emb.to_vec(),
        pos: pos.to_vec(),
        taste: taste.to_vec(),
    }
}

/// The score the service gives `stored` against `query` (f32 elements, f64 arithmetic).
fn score(metric: Metric, query: &[f32], stored: &[f32]) -> f64 {
    let pairs = || query.iter().zip(stored).map(|(q, s)| (f64::from(*q), f64::from(*s)));
    match metric {
        Metric::Euclidean => pairs().map(|(q, s)| (q - s) * (q - s)).sum::<f64>().sqrt(),
        Metric::DotProduct => pairs().map(|(q, s)| q * s).sum(),
        Metric::Cosine => {
            let dot: f64 = pairs().map(|(q, s)| q * s).sum();
            let qq: f64 = pairs().map(|(q, _)| q * q).sum();
            let ss: f64 = pairs().map(|(_, s)| s * s).sum();
            if qq == 0.0 || ss == 0.0 {
                return 1.0;
            }
            (1.0 - dot / (qq.sqrt() * ss.sqrt())).clamp(0.0, 2.0)
        }
    }
}

/// The brute-force answer: the `k` best scores of `items`, best first.
fn best_scores(metric: Metric, query: &[f32], items: &[Vec<f32>], k: usize) -> Vec<f64> {
    let mut scores: Vec<f64> = items.iter().map(|v| score(metric, query, v)).collect();
    scores.sort_by(|a, b| a.total_cmp(b));
    if metric.higher_is_nearer() {
        scores.reverse();
    }
    scores.truncate(k);
    scores
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The results are `k` (or all) of the items, nearest first, each with its own score, and the
/// scores are the brute-force model's best ones.
fn assert_exact(metric: Metric, query: &[f32], docs: &[Doc], k: usize, hits: &[Scored<Doc>]) {
    let vector = |d: &Doc| match metric {
        Metric::Cosine => d.emb.clone(),
        Metric::Euclidean => d.pos.clone(),
        Metric::DotProduct => d.taste.clone(),
    };
    let all: Vec<Vec<f32>> = docs.iter().map(vector).collect();
    let expected = best_scores(metric, query, &all, k);
    assert_eq!(hits.len(), expected.len(), "{metric:?}: one result per item, at most k");
    let mut ids: Vec<&str> = hits.iter().map(|h| h.entity.id.as_str()).collect();
    for (hit, want) in hits.iter().zip(&expected) {
        assert!(
            close(hit.score, *want),
            "{metric:?}: score {} where the model has {want}",
            hit.score
        );
        let stored = docs.iter().find(|d| d.id == hit.entity.id).expect("a result is a stored doc");
        assert_eq!(&hit.entity, stored, "the entity comes back whole, vectors included");
        assert!(close(hit.score, score(metric, query, &vector(stored))), "its own score");
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), hits.len(), "no item twice");
}

#[tokio::test]
async fn create_table_creates_the_vector_indexes() -> Result<(), Error> {
    let Some(db) = vector_db::<Shop>().await else { return Ok(()) };
    let out = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await
        .expect("DescribeTable");
    let table = out.table().expect("a description");
    let mut found: Vec<_> = table
        .vector_indexes()
        .iter()
        .map(|v| {
            (
                v.index_name().unwrap_or_default().to_owned(),
                v.vector_attribute().map(|a| a.attribute_name().to_owned()),
                v.dimensions(),
                v.distance_function().cloned(),
                v.search_schema()
                    .iter()
                    .map(|e| {
                        (e.attribute_name().to_owned(), e.search_schema_element_type().clone())
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let by_type = vec![("_type".to_owned(), SearchSchemaElementType::Hash)];
    assert_eq!(
        found,
        [
            (
                "by_cosine".into(),
                Some("emb".into()),
                Some(6),
                Some(VectorDistanceFunction::Cosine),
                by_type.clone()
            ),
            (
                "by_dot".into(),
                Some("taste".into()),
                Some(6),
                Some(VectorDistanceFunction::DotProduct),
                by_type.clone()
            ),
            (
                "by_euclid".into(),
                Some("pos".into()),
                Some(6),
                Some(VectorDistanceFunction::Euclidean),
                by_type
            ),
        ]
    );
    // Idempotent: the existing table matches its definition.
    db.create_table().await?;

    // A definition that differs (dimensions) is a mismatch, not a silent success.
    #[derive(Table)]
    #[table(name = "vectors", vector(name = "by_cosine", attr = "emb", dims = 7, metric = cosine))]
    struct Other;
    let other: Db<Other> = Db::with_table_name(db.client().clone(), db.table_name());
    let err = other.create_table().await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::TableMismatch {
                reason: TableMismatchReason::VectorIndex { index, .. },
                ..
            } if index == "by_cosine"
        ),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn vectors_round_trip_and_one_search_is_one_request() -> Result<(), Error> {
    let Some(db) = vector_db::<Catalogue>().await else { return Ok(()) };
    // Values an f32 holds exactly, and the extremes of the range.
    let look = vec![f32::MAX, -f32::MIN_POSITIVE, 1.0e-45];
    let lamp =
        Product { id: "lamp".into(), title: "Lamp".into(), look: Some(look.clone()), version: 1 };
    lamp.put(&db).await?;
    let read = Product::get(&db, "lamp").await?.expect("stored");
    assert_eq!(read.look, Some(look));

    let before = db.requests();
    let hits = Product::nearest(&db, 3, &[1.0, 0.0, 0.0]).await?;
    assert_eq!((db.requests() - before).total(), 1);
    assert_eq!((db.requests() - before).get(Op::SearchVectors), 1);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].entity, lamp);
    let stats = db.stats();
    let target = stats.target(Some("by_look"));
    assert_eq!(target.map(|t| (t.calls, t.items_read)), Some((1, 1)), "per-index statistics");
    Ok(())
}

#[tokio::test]
async fn ties_and_k_larger_than_the_index() -> Result<(), Error> {
    let Some(db) = vector_db::<Shop>().await else { return Ok(()) };
    let same = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0];
    let mut docs = Vec::new();
    for i in 0..5 {
        docs.push(doc(&format!("tie{i}"), same, same, same));
    }
    docs.push(doc("far", [0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [9.0; DIMS], [-1.0; DIMS]));
    for d in &docs {
        d.put(&db).await?;
    }
    let query = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0];
    for (metric, hits) in [
        (Metric::Cosine, Doc::nearest_by_cosine(&db, 3, &query).await?),
        (Metric::Euclidean, Doc::nearest_by_euclid(&db, 3, &query).await?),
        (Metric::DotProduct, Doc::nearest_by_dot(&db, 3, &query).await?),
    ] {
        // Three of the five equal ones, all with the same score, in any order.
        assert_exact(metric, &query, &docs, 3, &hits);
        assert!(hits.iter().all(|h| h.entity.id.starts_with("tie")), "{metric:?}");
        assert!(hits.iter().all(|h| h.score == hits[0].score), "{metric:?}");
    }
    // k beyond the items: every item, once.
    for k in [6, 7, 100] {
        let hits = Doc::nearest_by_euclid(&db, k, &query).await?;
        assert_exact(Metric::Euclidean, &query, &docs, k, &hits);
        assert_eq!(hits.last().map(|h| h.entity.id.as_str()), Some("far"));
    }
    Ok(())
}

#[tokio::test]
async fn other_entities_and_items_without_a_vector_are_never_returned() -> Result<(), Error> {
    let Some(db) = vector_db::<Shop>().await else { return Ok(()) };
    let query = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    // Notes store the exact query vector in the same attribute: nearer than any doc.
    for i in 0..4 {
        Note { id: format!("n{i}"), embedding: Some(query.to_vec()) }.put(&db).await?;
    }
    Note { id: "none".into(), embedding: None }.put(&db).await?;
    let docs = vec![
        doc("d1", [0.5, 0.5, 0.0, 0.0, 0.0, 0.0], [0.0; DIMS], [0.0; DIMS]),
        doc("d2", [0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0; DIMS], [1.0; DIMS]),
    ];
    for d in &docs {
        d.put(&db).await?;
    }
    let hits = Doc::nearest_by_cosine(&db, 10, &query).await?;
    assert_exact(Metric::Cosine, &query, &docs, 10, &hits);
    assert_eq!(hits.iter().map(|h| h.entity.id.as_str()).collect::<Vec<_>>(), ["d1", "d2"]);

    let notes = Note::nearest(&db, 10, &query).await?;
    let ids: Vec<&str> = notes.iter().map(|h| h.entity.id.as_str()).collect();
    assert_eq!(notes.len(), 4, "the note without a vector is not in the index: {ids:?}");
    assert!(notes.iter().all(|h| h.score == 0.0 && h.entity.id != "none"));
    // Its item holds no `emb` attribute (not a NULL, which the index would refuse).
    let raw = db.get(Note::key("none")).await?.expect("stored");
    assert_eq!(raw.embedding, None);
    Ok(())
}

#[tokio::test]
async fn updates_move_items_in_the_index() -> Result<(), Error> {
    let Some(db) = vector_db::<Catalogue>().await else { return Ok(()) };
    for (id, look) in [("red", [1.0, 0.0, 0.0]), ("green", [0.0, 1.0, 0.0])] {
        Product { id: id.into(), title: id.into(), look: Some(look.to_vec()), version: 1 }
            .put(&db)
            .await?;
    }
    let nearest =
        |hits: Vec<Scored<Product>>| hits.into_iter().map(|h| h.entity.id).collect::<Vec<_>>();
    assert_eq!(nearest(Product::nearest(&db, 1, &[0.0, 0.0, 1.0]).await?).len(), 1);

    Product::update(&db, "green").set(Product::LOOK, Some(vec![0.0, 0.1, 1.0])).await?;
    assert_eq!(nearest(Product::nearest(&db, 1, &[0.0, 0.0, 1.0]).await?), ["green"]);

    // `None` removes the attribute: the item leaves the index.
    Product::update(&db, "green").set(Product::LOOK, None::<Vec<f32>>).await?;
    assert_eq!(nearest(Product::nearest(&db, 5, &[0.0, 0.0, 1.0]).await?), ["red"]);
    assert_eq!(Product::get(&db, "green").await?.and_then(|p| p.look), None);
    Ok(())
}

#[tokio::test]
async fn invalid_vectors_and_searches_send_nothing() -> Result<(), Error> {
    // Checked before anything is sent: no table is needed, and none is read.
    let db: Db<Catalogue> = Db::with_table_name(local::client()?, "never-created");
    let problem = |e: Error| match e {
        Error::InvalidVector { entity: "Product", index: "by_look", problem } => problem,
        other => panic!("expected InvalidVector, got {other}"),
    };
    let search = |k: usize, v: Vec<f32>| {
        let db = &db;
        async move { crate::no_request!(db, Product::nearest(db, k, &v).await.unwrap_err()) }
    };
    assert_eq!(
        problem(search(0, vec![1.0, 0.0, 0.0]).await),
        VectorProblem::TopK { k: 0, max: 100 }
    );
    assert_eq!(
        problem(search(101, vec![1.0, 0.0, 0.0]).await),
        VectorProblem::TopK { k: 101, max: 100 }
    );
    assert_eq!(
        problem(search(1, vec![1.0, 0.0]).await),
        VectorProblem::Dimensions { expected: 3, actual: 2 }
    );
    assert_eq!(
        problem(search(1, vec![]).await),
        VectorProblem::Dimensions { expected: 3, actual: 0 }
    );
    assert_eq!(
        problem(search(1, vec![0.0, f32::NAN, 1.0]).await),
        VectorProblem::NotFinite { position: 1 }
    );
    assert_eq!(
        problem(search(1, vec![0.0, 1.0, f32::INFINITY]).await),
        VectorProblem::NotFinite { position: 2 }
    );

    // Writes: put, create, update, batch and transaction puts.
    let bad = |look: Vec<f32>| Product {
        id: "p".into(),
        title: "t".into(),
        look: Some(look),
        version: 1,
    };
    let err = crate::no_request!(db, bad(vec![1.0; 4]).put(&db).await.unwrap_err());
    assert_eq!(problem(err), VectorProblem::Dimensions { expected: 3, actual: 4 });
    let err = crate::no_request!(
        db,
        bad(vec![1.0, f32::NEG_INFINITY, 0.0]).create(&db).await.unwrap_err()
    );
    assert_eq!(problem(err), VectorProblem::NotFinite { position: 1 });
    let err = crate::no_request!(
        db,
        Product::update(&db, "p").set(Product::LOOK, Some(vec![0.5; 2])).await.unwrap_err()
    );
    assert_eq!(problem(err), VectorProblem::Dimensions { expected: 3, actual: 2 });
    // A NaN is no number DynamoDB stores: refused as such before the index is asked.
    let err = crate::no_request!(
        db,
        Product::update(&db, "p").set(Product::LOOK, Some(vec![f32::NAN; 3])).await.unwrap_err()
    );
    assert!(err.is_invalid_input(), "{err}");
    let err = crate::no_request!(db, db.batch_write().put(&bad(vec![])).await.unwrap_err());
    assert!(err.is_invalid_input(), "{err}");
    let err = crate::no_request!(db, db.transaction().put(&bad(vec![0.0; 2])).await.unwrap_err());
    assert!(err.is_invalid_input(), "{err}");
    Ok(())
}

#[tokio::test]
async fn unsupported_endpoint_is_a_typed_error() -> Result<(), Error> {
    // What the endpoint answers decides which half of the test runs.
    match local::isolated_db::<Catalogue>().await {
        Ok(db) => {
            assert!(Product::nearest(&db, 1, &[1.0, 0.0, 0.0]).await?.is_empty());
        }
        Err(e) => {
            assert!(e.is_vector_search_unsupported(), "{e}");
            eprintln!("the endpoint has no vector search: {e}");
            // A search is refused with the same typed error, naming the operation.
            let db: Db<Catalogue> = Db::with_table_name(local::client()?, "no-vector-search");
            let err = Product::nearest(&db, 1, &[1.0, 0.0, 0.0]).await.unwrap_err();
            assert!(
                matches!(
                    &err,
                    Error::Unsupported {
                        capability: ddb_model::error::Capability::VectorSearch,
                        operation: Op::SearchVectors,
                        source: Some(_)
                    }
                ),
                "{err}"
            );
            assert!(err.to_string().contains("UnknownOperationException"), "{err}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn filters_narrow_the_search_before_the_top_k() -> Result<(), Error> {
    let Some(db) = vector_db::<Catalogue>().await else { return Ok(()) };
    // The existing table matches its definition, filters included.
    db.create_table().await?;
    let items = [
        ("a", "lamp", 1, [1.0, 0.0, 0.0]),
        ("b", "lamp", 2, [0.9, 0.1, 0.0]),
        ("c", "desk", 1, [1.0, 0.01, 0.0]),
        ("d", "desk", 1, [0.0, 1.0, 0.0]),
        ("e", "lamp", 1, [0.0, 0.0, 1.0]),
    ];
    for (id, title, version, look) in items {
        Product { id: id.into(), title: title.into(), look: Some(look.to_vec()), version }
            .put(&db)
            .await?;
    }
    let ids =
        |hits: Vec<Scored<Product>>| hits.into_iter().map(|h| h.entity.id).collect::<Vec<_>>();
    let query = [1.0, 0.0, 0.0];
    assert_eq!(ids(Product::nearest(&db, 2, &query).await?), ["a", "c"]);
    // The two nearest desks: `c`, then `d`, although lamps are nearer than `d`.
    assert_eq!(
        ids(Product::nearest(&db, 2, &query).filter(Product::TITLE, "desk").await?),
        ["c", "d"]
    );
    assert_eq!(
        ids(Product::nearest(&db, 5, &query)
            .filter(Product::TITLE, "lamp")
            .filter(Product::VERSION, 1u32)
            .await?),
        ["a", "e"]
    );
    assert!(Product::nearest(&db, 5, &query).filter(Product::TITLE, "sofa").await?.is_empty());

    // Refused before sending: an attribute the index does not filter on, one filtered twice.
    let err = crate::no_request!(
        db,
        Product::nearest(&db, 5, &query).filter(Product::ID, "a").await.unwrap_err()
    );
    assert!(
        matches!(&err, Error::InvalidVector { problem: VectorProblem::Filter { attr, .. }, .. } if attr == "id"),
        "{err}"
    );
    let err = crate::no_request!(
        db,
        Product::nearest(&db, 5, &query)
            .filter(Product::VERSION, 1u32)
            .filter(Product::VERSION, 2u32)
            .await
            .unwrap_err()
    );
    assert!(
        matches!(&err, Error::InvalidVector { problem: VectorProblem::Filter { .. }, .. }),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn a_filter_value_of_another_type_is_refused() -> Result<(), Error> {
    let db: Db<Labels> = Db::with_table_name(local::client()?, "never-created");
    let label = Label { id: "l".into(), title: "red".into(), look: vec![1.0, 0.0, 0.0] };
    let err = crate::no_request!(db, label.put(&db).await.unwrap_err());
    assert!(
        matches!(
            &err,
            Error::InvalidVector {
                problem: VectorProblem::FilterType { attr: "title", expected: "N" },
                ..
            }
        ),
        "{err}"
    );
    let err = crate::no_request!(
        db,
        Label::update(&db, "l").set(Label::TITLE, "blue").await.unwrap_err()
    );
    assert!(
        matches!(&err, Error::InvalidVector { problem: VectorProblem::FilterType { .. }, .. }),
        "{err}"
    );
    let err = crate::no_request!(
        db,
        Label::nearest(&db, 1, &[1.0, 0.0, 0.0]).filter(Label::TITLE, "red").await.unwrap_err()
    );
    assert!(
        matches!(&err, Error::InvalidVector { problem: VectorProblem::FilterType { .. }, .. }),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn concurrent_writes_then_concurrent_searches() -> Result<(), Error> {
    let Some(db) = vector_db::<Shop>().await else { return Ok(()) };
    // 8 writers of 10 docs each, at once; every vector distinct.
    let docs: Vec<Doc> = (0..80u16)
        .map(|i| {
            let x = f32::from(i);
            doc(
                &format!("c{i}"),
                [x.sin(), x.cos(), 1.0, x / 80.0, 0.5, -0.5],
                [x, 80.0 - x, 0.0, 1.0, 2.0, 3.0],
                [1.0 / (x + 1.0), x.sqrt(), 0.0, 0.0, 1.0, 0.0],
            )
        })
        .collect();
    let writers = docs.chunks(10).map(|chunk| {
        let db = &db;
        async move {
            for d in chunk {
                d.put(db).await?;
            }
            Ok::<(), Error>(())
        }
    });
    for written in futures_util::future::join_all(writers).await {
        written?;
    }
    // 8 searches at once, each exact.
    let query = [0.3, 0.9, 1.0, 0.2, 0.5, -0.5];
    let before = db.requests();
    let searches = (1..=8).map(|k| Doc::nearest_by_cosine(&db, k * 5, &query));
    for (k, hits) in (1..=8).zip(futures_util::future::join_all(searches).await) {
        assert_exact(Metric::Cosine, &query, &docs, k * 5, &hits?);
    }
    assert_eq!((db.requests() - before).get(Op::SearchVectors), 8);
    Ok(())
}

/// The catalogue before its vector index was added.
#[derive(Table)]
#[table(name = "catalogue")]
struct Plain;

#[tokio::test]
async fn an_index_added_to_a_live_table_refuses_searches_until_built() -> Result<(), Error> {
    use ddb_model::aws_sdk_dynamodb::types::{
        AttributeDefinition, CreateVectorIndexAction, Projection, ProjectionType,
        ScalarAttributeType, SearchSchemaElement, VectorAttributeDefinition, VectorIndexUpdate,
    };
    // Only on an endpoint with vector search (the embedded engine holds the index back for a
    // while, as DynamoDB does).
    if vector_db::<Catalogue>().await.is_none() {
        return Ok(());
    }
    let plain = crate::support::db::<Plain>().await;
    let element = |name: &str, kind| {
        SearchSchemaElement::builder().attribute_name(name).search_schema_element_type(kind).build()
    };
    let definition = |name: &str, kind| {
        AttributeDefinition::builder().attribute_name(name).attribute_type(kind).build()
    };
    let index = CreateVectorIndexAction::builder()
        .index_name("by_look")
        .vector_attribute(
            VectorAttributeDefinition::builder().attribute_name("look").build().expect("built"),
        )
        .dimensions(3)
        .distance_function(VectorDistanceFunction::Cosine)
        .projection(Projection::builder().projection_type(ProjectionType::All).build())
        .search_schema(element("_type", SearchSchemaElementType::Hash).expect("built"))
        .search_schema(element("title", SearchSchemaElementType::InlineFilter).expect("built"))
        .search_schema(element("version", SearchSchemaElementType::InlineFilter).expect("built"))
        .build()
        .expect("built");
    plain
        .client()
        .update_table()
        .table_name(plain.table_name())
        .attribute_definitions(definition("_type", ScalarAttributeType::S).expect("built"))
        .attribute_definitions(definition("title", ScalarAttributeType::S).expect("built"))
        .attribute_definitions(definition("version", ScalarAttributeType::N).expect("built"))
        .vector_index_updates(VectorIndexUpdate::builder().create(index).build())
        .send()
        .await
        .expect("UpdateTable");
    let db: Db<Catalogue> = Db::with_table_name(plain.client().clone(), plain.table_name());
    let err = Product::nearest(&db, 1, &[1.0, 0.0, 0.0]).await.unwrap_err();
    assert!(err.is_vector_index_backfilling(), "{err}");
    assert!(matches!(err, Error::VectorIndexBackfilling { index: "by_look", .. }));
    Ok(())
}

/// A vector of `DIMS` elements from all of `f32`'s ordinary range (and zeros, for the cosine
/// of a zero vector).
fn vector() -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(
        prop_oneof![4 => -10.0f32..10.0, 1 => Just(0.0f32), 1 => -1.0e6f32..1.0e6],
        DIMS,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random items and queries: every search returns the model's best `k`, nearest first.
    #[test]
    fn nearest_is_the_exact_top_k(
        items in prop::collection::vec((vector(), vector(), vector()), 0..25),
        queries in prop::collection::vec((vector(), 1usize..30), 1..4),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            let Some(db) = vector_db::<Shop>().await else { return Ok(()) };
            let docs: Vec<Doc> = items
                .iter()
                .enumerate()
                .map(|(i, (e, p, t))| Doc {
                    id: format!("d{i}"),
                    shelf: "s".into(),
                    emb: e.clone(),
                    pos: p.clone(),
                    taste: t.clone(),
                })
                .collect();
            for d in &docs {
                d.put(&db).await?;
            }
            for (query, k) in &queries {
                assert_exact(Metric::Cosine, query, &docs, *k, &Doc::nearest_by_cosine(&db, *k, query).await?);
                assert_exact(Metric::Euclidean, query, &docs, *k, &Doc::nearest_by_euclid(&db, *k, query).await?);
                assert_exact(Metric::DotProduct, query, &docs, *k, &Doc::nearest_by_dot(&db, *k, query).await?);
            }
            Ok::<(), Error>(())
        }).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
