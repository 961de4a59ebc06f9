//! The model tooling: the exports of a model with every kind of declaration (indexes with a
//! `when`, a version, trees of two strategies, edges with inverse items and with an index)
//! against golden files, the NoSQL Workbench model's structure, and the command-line tool
//! (table creation on both backends, usage errors, the migration extension point).
//!
//! `UPDATE_GOLDEN=1 cargo test --test it tooling` rewrites the golden files; read the diff.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::ops::BoxFuture;
use ddb_model::prelude::*;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::{Cli, CliError, Migration, MigrationProgress};
use ddb_model::{Edge, local};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Table)]
#[table(
    name = "shop",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk")
)]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<id>", sk = "PROFILE", version = version)]
#[index(gsi1, pk = "EMAIL#<email>", sk = "CUSTOMER")]
struct Customer {
    id: String,
    email: String,
    #[serde(rename = "displayName")]
    display_name: Option<String>,
    tags: Vec<String>,
    version: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<customer>", sk = "ORDER#<placed>#<seq>")]
#[index(gsi2, pk = "OPEN#<customer>", sk = "<seq>", when = open)]
struct Order {
    customer: String,
    placed: u32,
    seq: u32,
    open: bool,
    lines: std::collections::HashMap<String, u32>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CATALOG#<catalog>", sk = "CAT#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct Category {
    catalog: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "ORG#<org>", sk = "UNIT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi1)]
struct Unit {
    org: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<customer>", sk = "WISH#<product>")]
#[edge(from = customer, to = product, inverse(pk = "PRODUCT#<product>", sk = "WISHED#<customer>"))]
struct Wish {
    customer: String,
    product: String,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<customer>", sk = "VIEW#<product>")]
#[index(gsi2, pk = "VIEWED#<product>", sk = "BY#<customer>")]
#[edge(from = customer, to = product, inverse(index = gsi2))]
struct View {
    customer: String,
    product: String,
}

fn model() -> TableModel {
    TableModel::of::<Shop>()
        .entity::<Customer>()
        .entity::<Order>()
        .entity::<Category>()
        .entity::<Unit>()
        .edge::<Wish>()
        .edge::<View>()
        .entity::<Customer>() // a second time changes nothing
}

const DATE: &str = "Nov 27, 2026, 06:30 PM";

/// Compares `text` with the golden file `name` (rewrites it with `UPDATE_GOLDEN=1`).
fn golden(name: &str, text: &str) {
    let path = format!("{}/tests/it/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).expect("write the golden file");
    }
    let want = std::fs::read_to_string(&path).expect("the golden file");
    assert!(want == text, "{name} differs from its golden file:\n{text}");
}

#[test]
fn exports_match_their_golden_files() {
    let model = model();
    assert_eq!(model.entities.len(), 6);
    golden("shop.mmd", &model.mermaid());
    golden("shop.md", &model.markdown());
    golden("shop.workbench.json", &format!("{}\n", model.workbench_json(DATE)));
}

#[test]
fn markdown_rows_are_the_patterns() {
    let model = model();
    let md = model.markdown();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| entity") && !l.starts_with("| ---"))
        .collect();
    assert_eq!(rows.len(), model.patterns().count());
    for row in &rows {
        // Six cells: a `|` inside a cell would be escaped.
        assert_eq!(row.matches(" | ").count(), 5, "{row}");
    }
    for want in [
        "| Customer | get | `Customer::get(&db, id)` | `pk = CUSTOMER#<id>, sk = PROFILE` | table | 1 GetItem |",
        "| Order | by placed, seq | `Order::query(&db, customer).placed(..).seq(..)` | `pk = CUSTOMER#<customer>, sk = ORDER#<placed>#<seq>` | table | 1 Query |",
        "| Order | gsi2: partition `OPEN#<customer>` | `Order::partition_gsi2(&db, customer)` | `pk = OPEN#<customer>` | gsi2 | 1 Query per page (eventually consistent) |",
        "| Category | tree ancestors (closure) | `Category::tree(&db, catalog).ancestors(..)` |  | table | 1 GetItem + 1 BatchGetItem |",
        "| Unit | tree descendants (adjacency) | `Unit::tree(&db, org).descendants(..)` |  | gsi1 | 1 Query per level |",
        "| Wish | incoming | `Wish::edges(&db).incoming(to)` |  | table | 1 Query per page (`Wish~inverse` items) |",
        "| View | incoming | `View::edges(&db).incoming(to)` |  | gsi2 | 1 Query per page (eventually consistent) |",
    ] {
        assert!(rows.contains(&want), "missing row {want}\n{md}");
    }
    // Closure nodes are updated through their tree: no plain update row.
    assert!(!rows.iter().any(|r| r.starts_with("| Category | update |")));
}

#[test]
fn mermaid_is_well_formed() {
    let model = model();
    let text = model.mermaid();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("erDiagram"));
    let mut open: Option<&str> = None;
    let mut boxes = Vec::new();
    for line in lines {
        if let Some(name) = line.strip_prefix("    ").and_then(|l| l.strip_suffix(" {")) {
            assert!(open.is_none(), "nested box: {line}");
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{line}");
            open = Some(name);
            boxes.push(name.to_owned());
        } else if line == "    }" {
            assert!(open.take().is_some(), "a box closed twice");
        } else if open.is_some() {
            // `type name "comment"`: a DynamoDB type, a word, a quoted comment without quotes.
            let mut parts = line.trim_start().splitn(3, ' ');
            let ty = parts.next().unwrap_or_default();
            let name = parts.next().unwrap_or_default();
            let comment = parts.next().unwrap_or_default();
            assert!(["S", "N", "B", "BOOL", "L", "M"].contains(&ty), "{line}");
            assert!(
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{line}"
            );
            assert!(
                comment.starts_with('"')
                    && comment.ends_with('"')
                    && comment[1..comment.len() - 1].find('"').is_none(),
                "{line}"
            );
        } else {
            assert!(line.starts_with("    %%") || line.contains(" : \""), "{line}");
        }
    }
    assert!(open.is_none());
    for e in ["Customer", "Order", "Category", "Unit", "Wish", "View", "Wish_inverse"] {
        assert!(boxes.iter().any(|b| b == e), "no box for {e}");
    }
    assert!(text.contains("    Category |o--o{ Category : \"parent (closure tree)\""));
    assert!(text.contains("        S displayName \"Option<String>\""));
    assert!(text.contains("        S gsi2pk \"gsi2 pk: OPEN#<customer>\""));
}

#[test]
fn workbench_model_is_consistent() {
    let model = model();
    let json: Value = serde_json::from_str(&model.workbench_json(DATE)).expect("JSON");
    assert_eq!(json["ModelName"], "shop");
    assert_eq!(json["ModelMetadata"]["Version"], "3.0");
    assert_eq!(json["ModelMetadata"]["DateCreated"], DATE);
    let tables = json["DataModel"].as_array().expect("DataModel");
    assert_eq!(tables.len(), 1);
    let table = &tables[0];
    assert_eq!(table["TableName"], "shop");
    assert_eq!(table["KeyAttributes"]["PartitionKey"]["AttributeName"], "pk");
    assert_eq!(table["KeyAttributes"]["SortKey"]["AttributeName"], "sk");
    let attributes: Vec<(&str, &str)> = table["NonKeyAttributes"]
        .as_array()
        .expect("NonKeyAttributes")
        .iter()
        .map(|a| {
            (a["AttributeName"].as_str().expect("name"), a["AttributeType"].as_str().expect("type"))
        })
        .collect();
    let names: Vec<&str> = attributes.iter().map(|(n, _)| *n).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "an attribute listed twice");
    assert!(!names.contains(&"pk") && !names.contains(&"sk"), "key attributes are not non-key");
    for (name, ty) in &attributes {
        assert!(
            ["S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"].contains(ty),
            "{name}: {ty}"
        );
    }
    for (name, ty) in [
        ("_type", "S"),
        ("email", "S"),
        ("tags", "L"),
        ("version", "N"),
        ("open", "BOOL"),
        ("lines", "M"),
        ("displayName", "S"),
    ] {
        assert!(attributes.contains(&(name, ty)), "{name}: {ty} in {attributes:?}");
    }
    // Every facet's attributes are the table's, and its aliases are the entity's templates.
    let facets = table["TableFacets"].as_array().expect("TableFacets");
    let facet_names: Vec<&str> =
        facets.iter().map(|f| f["FacetName"].as_str().expect("name")).collect();
    assert_eq!(
        facet_names,
        ["Customer", "Order", "Category", "Unit", "Wish", "Wish~inverse", "View"]
    );
    for facet in facets {
        for attr in facet["NonKeyAttributes"].as_array().expect("facet attributes") {
            let attr = attr.as_str().expect("attribute name");
            assert!(
                names.contains(&attr),
                "facet {} names `{attr}`, not in the table",
                facet["FacetName"]
            );
        }
        assert!(facet["KeyAttributeAlias"]["PartitionKeyAlias"].is_string());
        assert!(facet["KeyAttributeAlias"]["SortKeyAlias"].is_string());
    }
    assert_eq!(facets[1]["KeyAttributeAlias"]["SortKeyAlias"], "ORDER#<placed>#<seq>");
    assert_eq!(facets[5]["KeyAttributeAlias"]["PartitionKeyAlias"], "PRODUCT#<product>");
    // Every index's key attributes are attributes of the table.
    let indexes = table["GlobalSecondaryIndexes"].as_array().expect("indexes");
    assert_eq!(indexes.len(), 2);
    for index in indexes {
        for key in ["PartitionKey", "SortKey"] {
            let attr = index["KeyAttributes"][key]["AttributeName"].as_str().expect("key");
            assert!(names.contains(&attr), "{attr}");
        }
        assert_eq!(index["Projection"]["ProjectionType"], "ALL");
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| (*a).to_owned()).collect()
}

#[tokio::test]
async fn cli_creates_the_table() -> Result<(), CliError> {
    let cli = Cli::new(model());
    let endpoint = local::endpoint()?;
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let table =
        format!("tool-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let create = args(&["create-table", "--endpoint", &endpoint, "--table", &table]);
    let mut out = Vec::new();
    cli.run_with(&create, &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), format!("table `{table}` is active\n"));
    // The table is as declared; creating it again is a no-op.
    let described = local::client_for(&endpoint).describe_table().table_name(&table).send().await;
    let described = described.map_err(|e| CliError::Usage(e.to_string()))?;
    let t = described.table().expect("table");
    let mut gsis: Vec<&str> =
        t.global_secondary_indexes().iter().filter_map(|g| g.index_name()).collect();
    gsis.sort_unstable();
    assert_eq!(gsis, ["gsi1", "gsi2"]);
    assert_eq!(t.key_schema().len(), 2);
    cli.run_with(&create, &mut Vec::new()).await?;
    // A model that disagrees with the table is refused.
    let other = Cli::new(TableModel::of::<ddb_model::DefaultTable>());
    let err = other.run_with(&create, &mut Vec::new()).await.expect_err("a different table");
    assert!(matches!(err, CliError::Ddb(_)), "{err}");
    Ok(())
}

#[tokio::test]
async fn cli_creates_the_table_with_options() -> Result<(), CliError> {
    let cli = Cli::new(model());
    let endpoint = local::endpoint()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let table = format!("tool-opts-{}-{nanos}", std::process::id());
    let create = args(&[
        "create-table",
        "--endpoint",
        &endpoint,
        "--table",
        &table,
        "--deletion-protection",
        "--max-on-demand",
        "30,10",
    ]);
    cli.run_with(&create, &mut Vec::new()).await?;
    let described = local::client_for(&endpoint).describe_table().table_name(&table).send().await;
    let described = described.map_err(|e| CliError::Usage(e.to_string()))?;
    let t = described.table().expect("table");
    assert_eq!(t.deletion_protection_enabled(), Some(true));
    let max = t.on_demand_throughput().and_then(|m| m.max_write_request_units());
    assert_eq!(max, Some(10));
    // Below the service's minimum: refused before anything is sent.
    let low = args(&["create-table", "--endpoint", &endpoint, "--table", "never", "--warm", "1,1"]);
    let err = cli.run_with(&low, &mut Vec::new()).await.expect_err("below the minimum");
    assert!(err.to_string().contains("12000"), "{err}");
    Ok(())
}

#[tokio::test]
async fn cli_usage_errors() {
    let cli = Cli::new(model());
    for bad in [
        &[][..],
        &["drop"],
        &["mermaid", "--table", "x"],
        &["create-table"],
        &["create-table", "--endpoint"],
        &["create-table", "--endpoint", "http://x", "extra"],
        &["migrate", "nothing-registered", "--endpoint", "http://x"],
        &["create-table", "--endpoint", "http://x", "--warm", "12000"],
        &["create-table", "--endpoint", "http://x", "--max-on-demand", "a,b"],
        &[
            "create-table",
            "--endpoint",
            "http://x",
            "--deletion-protection",
            "--deletion-protection",
        ],
        &["migrate", "--endpoint", "http://x", "--deletion-protection"],
        &["mermaid", "--deletion-protection"],
    ] {
        let err = cli.run_with(&args(bad), &mut Vec::new()).await.expect_err("a usage error");
        assert!(matches!(err, CliError::Usage(_)), "{bad:?}: {err}");
        assert!(err.to_string().contains("usage:"), "{err}");
    }
}

/// A migration for the test of the extension point: reports 3 steps of 10 items.
struct Count(Arc<AtomicU64>);

impl Migration for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "counts to thirty"
    }
    fn run<'a>(
        &'a self,
        client: Client,
        table: &'a str,
        progress: &'a mut (dyn FnMut(MigrationProgress) + Send),
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            client
                .describe_table()
                .table_name(table)
                .send()
                .await
                .map_err(|e| Error::Local(e.to_string()))?;
            for step in 1..=3 {
                progress(MigrationProgress { done: step * 10, total: Some(30) });
                self.0.store(step * 10, Ordering::SeqCst);
            }
            Ok(())
        })
    }
}

#[tokio::test]
async fn cli_runs_registered_migrations() -> Result<(), CliError> {
    let done = Arc::new(AtomicU64::new(0));
    let cli = Cli::new(model()).migration(Count(done.clone()));
    let mut out = Vec::new();
    cli.run_with(&args(&["migrate"]), &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), "count\tcounts to thirty\n");

    let db = crate::support::db::<Shop>().await;
    let endpoint = local::endpoint()?;
    let mut out = Vec::new();
    let run = args(&["migrate", "count", "--endpoint", &endpoint, "--table", db.table_name()]);
    cli.run_with(&run, &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), "migration `count` finished: 30 items\n");
    assert_eq!(done.load(Ordering::SeqCst), 30);
    Ok(())
}
