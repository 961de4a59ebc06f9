//! Vector search on a small catalogue: products with an embedding of their description,
//! found by the nearest embeddings to a shopper's words.
//!
//! The embeddings are computed here, deterministically, by hashing words into 256 buckets (a
//! "bag of words": texts sharing words point the same way), so the example needs no model.
//! Any embedding works the same way: store a `Vec<f32>` of the index's dimensions.
//!
//!     cargo run --example vector_search
//!
//! Runs against the embedded DynamoDB-compatible engine. DynamoDB Local has no vector search:
//! with `DDB_ENDPOINT` set to it, the example prints the typed error and stops.

use ddb_model::local;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

/// The number of elements of an embedding.
const DIMS: usize = 256;

#[derive(Table)]
#[table(
    name = "catalogue",
    vector(name = "by_text", attr = "embedding", dims = 256, metric = cosine, filters = ["department"])
)]
struct Catalogue;

/// A product. Its embedding is in the vector index `by_text`, which can be searched within
/// one department; a draft has no embedding yet, and is not in the index.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Catalogue, pk = "PRODUCT#<sku>", sk = "PRODUCT")]
struct Product {
    sku: String,
    department: String,
    title: String,
    description: String,
    #[vector(by_text)]
    embedding: Option<Vec<f32>>,
}

/// A review, stored in the same table and the same attribute: a search of products never
/// returns one (the index is partitioned by entity type).
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Catalogue, pk = "PRODUCT#<sku>", sk = "REVIEW#<n>")]
struct Review {
    sku: String,
    n: u32,
    text: String,
    #[vector(by_text)]
    embedding: Vec<f32>,
}

/// FNV-1a: a stable hash, the same in every process.
fn fnv(word: &str) -> u64 {
    word.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Words that say nothing about a product.
const STOP_WORDS: [&str; 8] = ["the", "for", "and", "at", "in", "of", "a", "on"];

/// The embedding of `text`: each word adds ±1 to one of `DIMS` buckets (both chosen by its
/// hash), then the vector is scaled to length 1. A text without words is the zero vector.
fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIMS];
    let words = text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase);
    for word in words.filter(|w| !w.is_empty() && !STOP_WORDS.contains(&w.as_str())) {
        let h = fnv(&word);
        let bucket = (h % DIMS as u64) as usize;
        v[bucket] += if h >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

fn product(sku: &str, department: &str, title: &str, description: &str) -> Product {
    let embedding = Some(embed(&format!("{title} {description}")));
    Product {
        sku: sku.into(),
        department: department.into(),
        title: title.into(),
        description: description.into(),
        embedding,
    }
}

async fn search(db: &Db<Catalogue>, words: &str, k: usize) -> Result<(), Error> {
    let before = db.requests();
    let hits = Product::nearest(db, k, &embed(words)).await?;
    println!("\"{words}\" (top {k}, {} request):", (db.requests() - before).total());
    for hit in hits {
        println!("  {:.3}  {:<6} {}", hit.score, hit.entity.sku, hit.entity.title);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db = match local::isolated_db::<Catalogue>().await {
        Ok(db) => db,
        Err(e) if e.is_vector_search_unsupported() => {
            println!("{e}");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    println!("table `{}` on {}\n", db.table_name(), local::endpoint()?);

    let catalogue = [
        product(
            "SOCK1",
            "clothing",
            "Wool hiking socks",
            "warm merino wool socks for cold mountain trails",
        ),
        product("SOCK2", "clothing", "Cotton ankle socks", "light cotton socks for summer running"),
        product(
            "BOOT1",
            "footwear",
            "Winter boots",
            "warm waterproof boots for snow and cold trails",
        ),
        product("TENT1", "camping", "Alpine tent", "four season tent for mountain camping in snow"),
        product("MUG01", "camping", "Enamel camping mug", "light mug for coffee at camp"),
        product("HAT01", "clothing", "Wool beanie", "warm merino wool hat for cold winter days"),
        product("LAMP1", "camping", "Head torch", "bright light for night trails and camping"),
    ];
    for p in &catalogue {
        p.put(&db).await?;
    }
    // A draft has no embedding: no attribute is written, and it is not in the index.
    Product {
        sku: "DRAFT".into(),
        department: "camping".into(),
        title: "Untitled".into(),
        description: String::new(),
        embedding: None,
    }
    .put(&db)
    .await?;
    // A review that says exactly what a shopper will type: never a product result.
    Review {
        sku: "SOCK2".into(),
        n: 1,
        text: "warm wool socks".into(),
        embedding: embed("warm wool socks"),
    }
    .put(&db)
    .await?;

    search(&db, "warm wool socks", 3).await?;
    search(&db, "camping in the snow", 3).await?;
    search(&db, "light for the trails at night", 2).await?;

    // An update moves the product in the index, in its one UpdateItem.
    let description = "warm wool blend socks for winter";
    Product::update(&db, "SOCK2")
        .set(Product::DESCRIPTION, description)
        .set(Product::EMBEDDING, Some(embed(&format!("Cotton ankle socks {description}"))))
        .await?;
    println!("\nafter SOCK2's new description:");
    search(&db, "warm wool socks", 3).await?;

    // Within one department: the service filters before it takes the top k.
    let before = db.requests();
    let camping = Product::nearest(&db, 2, &embed("sleeping in the snow at night"))
        .filter(Product::DEPARTMENT, "camping")
        .await?;
    println!(
        "\n\"sleeping in the snow at night\" in camping (top 2, {} request):",
        (db.requests() - before).total()
    );
    for hit in camping {
        println!("  {:.3}  {:<6} {}", hit.score, hit.entity.sku, hit.entity.title);
    }

    // Reviews are searched on their own.
    let reviews = Review::nearest(&db, 5, &embed("wool socks")).await?;
    println!("\nreviews near \"wool socks\": {}", reviews.len());

    // Checked before sending: the wrong length, a NaN, k out of 1..=100.
    let before = db.requests();
    for err in [
        Product::nearest(&db, 3, &[1.0, 0.0]).await.unwrap_err(),
        Product::nearest(&db, 3, &vec![f32::NAN; DIMS]).await.unwrap_err(),
        Product::nearest(&db, 0, &embed("socks")).await.unwrap_err(),
    ] {
        println!("refused: {err}");
    }
    assert_eq!((db.requests() - before).total(), 0);
    Ok(())
}
