//! The model tooling: the exports of a model with every kind of declaration (indexes with a
//! `when`, a version, trees of two strategies, edges with inverse items and with an index)
//! against golden files, the NoSQL Workbench model's structure, and the command-line tool
//! (table creation on both backends, usage errors, the migration extension point); a second
//! model with the newest declarations (vector index, expiry, schema version, unique
//! constraints) in every export, and the stated costs against the requests sent.
//!
//! `UPDATE_GOLDEN=1 cargo test --test it tooling` rewrites the golden files; read the diff.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::ops::BoxFuture;
use ddb_model::prelude::*;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::{Cli, CliError, Migration, MigrationKind, MigrationProgress};
use ddb_model::{Edge, Op, local};
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

/// A second table for the newest features: a vector index with filters, Time to Live, a
/// renamed schema attribute.
#[derive(Table)]
#[table(
    name = "catalog",
    ttl = "expires",
    schema_attr = "_v",
    vector(name = "by_look", attr = "look", dims = 3, metric = cosine, filters = ["brand", "stock": N])
)]
struct Catalog;

/// Every new declaration at once: a vector field, an expiry field, a schema version, a unique
/// field in a shared scope and a composite unique constraint.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(
    table = Catalog,
    pk = "PRODUCT#<id>",
    sk = "PRODUCT",
    ttl = expires,
    schema = 2,
    upgrade = upgrade_product,
    unique(brand, model)
)]
struct Product {
    id: String,
    #[unique(scope = "code")]
    sku: String,
    brand: String,
    model: String,
    stock: u32,
    #[vector(by_look)]
    look: Option<Vec<f32>>,
    expires: std::time::SystemTime,
}

fn upgrade_product(
    from: u32,
    _item: &mut ddb_model::Item,
) -> Result<(), ddb_model::error::UpgradeError> {
    Err(format!("no upgrade from version {from}").into())
}

/// A plain entity of the same table: no vector, no expiry, no constraint.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Catalog, pk = "BRAND#<name>", sk = "BRAND")]
struct Brand {
    name: String,
}

/// A table for every kind of access path at once: template indexes (one with `when` and
/// `query = ..`), multi-attribute indexes with and without sort attributes, a vector index,
/// a tree's index.
#[derive(Table)]
#[table(
    name = "desk",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"),
    gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created", "seq": N]),
    gsi(name = "by_owner", pk = ["owner"]),
    vector(name = "by_text", attr = "text", dims = 3, metric = cosine)
)]
struct Desk;

/// Every kind of entity access path: the table's keys, a template index with `when` and
/// `query = ..`, two multi-attribute indexes, a unique field, a vector field.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Desk, pk = "TENANT#<tenant>", sk = "TICKET#<seq>")]
#[index(by_status, pk = [tenant, status], sk = [priority, created, seq])]
#[index(by_owner, pk = [owner])]
#[index(gsi1, pk = "OWNER#<owner>", sk = "<created>", when = open, query = open_by_owner)]
struct Ticket {
    tenant: String,
    seq: u32,
    status: String,
    priority: i64,
    created: String,
    owner: String,
    open: bool,
    #[unique]
    code: String,
    #[vector(by_text)]
    text: Option<Vec<f32>>,
}

/// A tree on an index.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Desk, pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi2)]
struct Folder {
    drive: String,
    path: ddb_model::TreePath,
}

/// An edge with inverse items.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Desk, pk = "USER#<user>", sk = "WATCHES#<ticket>")]
#[edge(from = user, to = ticket, inverse(pk = "WATCHED#<ticket>", sk = "BY#<user>"))]
struct Watch {
    user: String,
    ticket: String,
}

fn desk() -> TableModel {
    TableModel::of::<Desk>().entity::<Ticket>().entity::<Folder>().edge::<Watch>()
}

fn catalog() -> TableModel {
    TableModel::of::<Catalog>().entity::<Product>().entity::<Brand>()
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
    let catalog = catalog();
    golden("catalog.mmd", &catalog.mermaid());
    golden("catalog.md", &catalog.markdown());
    golden("catalog.workbench.json", &format!("{}\n", catalog.workbench_json(DATE)));
    let desk = desk();
    golden("desk.mmd", &desk.mermaid());
    golden("desk.md", &desk.markdown());
    golden("desk.workbench.json", &format!("{}\n", desk.workbench_json(DATE)));
}

/// The Markdown's rows as cells (entity, pattern, call, key, reads, requests).
fn markdown_rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| entity") && !l.starts_with("| ---"))
        .map(|l| {
            let inner = l.trim_start_matches("| ").trim_end_matches(" |");
            inner.split(" | ").map(|c| c.replace("\\|", "|")).collect()
        })
        .collect()
}

/// True when a Markdown row stands for generated method `m`: its call names it, or its
/// pattern lists it before a `:` or a `` ` `` (`create, put, replace`).
fn row_names(row: &[String], m: &str) -> bool {
    let call = &row[2];
    let listed = row[1].split([':', '`']).next().unwrap_or_default();
    call.contains(&format!("::{m}("))
        || call.contains(&format!(".{m}("))
        || listed.split(',').any(|w| w.trim() == m)
}

/// Every access method the derives generated (as the entity's description lists them, read
/// from the generated code) has a row of its own in the Markdown, every row calls a
/// generated method, and every index an entity uses is named by each export.
#[test]
fn every_access_path_is_in_every_export() {
    let model = desk();
    // The model holds every kind of declaration (so that the checks below check them all).
    let [ticket, folder, watch] = &model.entities[..] else { panic!("three entities") };
    let s = &ticket.shape;
    assert!(s.multi_indexes.iter().any(|i| !i.sk.is_empty()));
    assert!(s.multi_indexes.iter().any(|i| i.sk.is_empty()));
    assert!(s.indexes.iter().any(|i| i.when.is_some() && i.query.is_some()));
    assert!(!s.vectors.is_empty() && !ticket.uniques.is_empty());
    assert!(folder.shape.tree.as_ref().is_some_and(|t| t.index.is_some()));
    assert!(watch.edge.is_some());

    let md = model.markdown();
    let rows = markdown_rows(&md);
    assert_eq!(rows.len(), model.patterns().count());
    let mermaid = model.mermaid();
    let workbench = model.workbench(DATE);
    let table = &workbench["DataModel"][0];
    let gsis: Vec<&str> = table["GlobalSecondaryIndexes"]
        .as_array()
        .expect("indexes")
        .iter()
        .filter_map(|i| i["IndexName"].as_str())
        .collect();
    let description = workbench["ModelMetadata"]["Description"].as_str().expect("description");
    for e in &model.entities {
        let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == e.name).collect();
        let mut methods = e.shape.methods.clone();
        assert!(methods.iter().any(|m| m == "get"), "{}: {methods:?}", e.name);
        if e.edge.is_some() {
            methods.push("edges".into());
        }
        for m in &methods {
            assert!(
                mine.iter().any(|r| row_names(r, m)),
                "{}::{m} not in the Markdown
{md}",
                e.name
            );
        }
        for row in &mine {
            // A row of a method the export does not describe has no table or index.
            assert!(!row[4].is_empty(), "an undescribed method: {row:?}");
            // Its call is a generated method.
            // (`Ticket::get(..)`, `ticket.create(..)`: the first name after `::` or `.`)
            let call = row[2].trim_matches('`');
            let after = call.split_once("::").or_else(|| call.split_once('.')).map(|(_, r)| r);
            let called = after.and_then(|c| c.split('(').next());
            assert!(called.is_some_and(|c| methods.iter().any(|m| m == c)), "{row:?}");
        }
        // Every index the entity uses: a row reads it, its box names it, the Workbench holds it.
        let mut indexes: Vec<&str> = e.shape.indexes.iter().map(|i| i.index.as_str()).collect();
        indexes.extend(e.shape.multi_indexes.iter().map(|i| i.index.as_str()));
        indexes.extend(e.shape.vectors.iter().map(|v| v.index.as_str()));
        indexes.extend(e.shape.tree.as_ref().and_then(|t| t.index.as_deref()));
        let entity_box = mermaid
            .split(&format!("    {} {{\n", e.name))
            .nth(1)
            .and_then(|b| b.split("    }").next())
            .expect("the entity's box");
        let facet = table["TableFacets"]
            .as_array()
            .expect("facets")
            .iter()
            .find(|f| f["FacetName"] == e.name)
            .expect("the entity's facet");
        for index in indexes {
            assert!(mine.iter().any(|r| r[4] == index), "{}: no row reads {index}\n{md}", e.name);
            let mut words = entity_box.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            assert!(words.any(|w| w == index), "{}: {index} in\n{entity_box}", e.name);
            match model.indexes.iter().find(|d| d.name == index) {
                Some(def) => {
                    assert!(gsis.contains(&index), "{index} not in {gsis:?}");
                    let attrs: Vec<&str> = if def.is_multi() {
                        def.pk_attrs.iter().chain(def.sk_attrs).map(|a| a.name).collect()
                    } else {
                        std::iter::once(def.pk).chain(def.sk).collect()
                    };
                    for attr in attrs {
                        let listed = facet["NonKeyAttributes"].as_array().expect("attributes");
                        assert!(listed.contains(&Value::from(attr)), "{}: {attr}", e.name);
                        if def.is_multi() {
                            assert!(description.contains(index), "{description}");
                        }
                    }
                }
                None => assert!(
                    description.contains(&format!("Vector index {index} ")),
                    "{description}"
                ),
            }
        }
    }
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
        "| Order | gsi2 (when open): partition `OPEN#<customer>` | `Order::partition_gsi2(&db, customer)` | `pk = OPEN#<customer>` | gsi2 | 1 Query per page (eventually consistent) |",
        "| Customer | Customer items of `CUSTOMER#<id>` | `Customer::query(&db, id)` | `pk = CUSTOMER#<id>, sk = PROFILE` | table | 1 Query |",
        "| Category | tree ancestors (closure) | `Category::tree(&db, catalog).ancestors(..)` |  | table | 1 GetItem + 1 BatchGetItem |",
        "| Unit | tree descendants (adjacency) | `Unit::tree(&db, org).descendants(..)` |  | gsi1 | 1 Query per level |",
        "| Wish | incoming | `Wish::edges(&db).incoming(to)` |  | table | 1 Query per page (`Wish~inverse` items) |",
        "| View | incoming | `View::edges(&db).incoming(to)` |  | gsi2 | 1 Query per page (eventually consistent) |",
    ] {
        assert!(rows.contains(&want), "missing row {want}\n{md}");
    }
    // Closure nodes are updated through their tree: no plain update row.
    assert!(!rows.iter().any(|r| r.starts_with("| Category | update |")));
    assert!(rows.iter().any(|r| r.starts_with("| Category | update, through the tree")
        && r.contains("`Category::tree(&db, catalog).update(..)`")));
}

/// Checks the Mermaid text's structure; returns its boxes.
fn mermaid_boxes(text: &str) -> Vec<String> {
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
    boxes
}

#[test]
fn mermaid_is_well_formed() {
    let model = model();
    let text = model.mermaid();
    let boxes = mermaid_boxes(&text);
    for e in ["Customer", "Order", "Category", "Unit", "Wish", "View", "Wish_inverse"] {
        assert!(boxes.iter().any(|b| b == e), "no box for {e}");
    }
    assert!(text.contains("    Category |o--o{ Category : \"parent (closure tree)\""));
    assert!(text.contains("        S displayName \"Option<String>\""));
    assert!(text.contains("        S gsi2pk \"gsi2 pk: OPEN#<customer> (when open)\""));
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

#[test]
fn exports_show_vectors_expiry_schema_and_unique_sentinels() {
    let model = catalog();
    let product = &model.entities[0];
    assert_eq!((model.ttl, model.schema_attr), (Some("expires"), "_v"));
    assert_eq!((product.ttl, product.schema), (Some("expires"), Some(2)));
    assert_eq!(product.vector_indexes.len(), 1);
    assert!(model.entities[1].vector_indexes.is_empty() && model.entities[1].uniques.is_empty());
    let sentinels = model.unique_sentinels(product);
    let keys: Vec<(&str, Option<&str>, &str)> = sentinels
        .iter()
        .map(|u| (u.sentinel_pk.as_str(), u.sentinel_sk, u.type_name.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("_unique#code#<sku>", Some("_unique"), "Product:unique"),
            ("_unique#Product.brand+model#<brand>#<model>", Some("_unique"), "Product:unique"),
        ]
    );

    // The runtime's key of a value starts with the template's text before its placeholders.
    for u in &sentinels {
        let (pk, sk) = ddb_model::ops::unique::sentinel_key::<Product>(&u.def, "").expect("a key");
        assert_eq!(Some(pk.as_str()), u.sentinel_pk.split('<').next(), "{}", u.def.field);
        assert_eq!(sk.as_deref(), u.sentinel_sk);
    }

    // Mermaid: well formed, the table's vector index and Time to Live, the schema attribute,
    // the expiry field as a number, a box per sentinel related to its owner.
    let text = model.mermaid();
    let boxes = mermaid_boxes(&text);
    assert_eq!(boxes, ["Product", "Brand", "Product_unique_sku", "Product_unique_brand__model"]);
    for want in [
        "    %% vector index by_look on look: 3 dims, COSINE, partitioned by _type, filters brand (S), stock (N)",
        "    %% Time to Live on expires (seconds since the epoch)",
        "        N _v \"schema version 2\"",
        "        N expires \"std::time::SystemTime, Time to Live: seconds since the epoch\"",
        "        L look \"Option<Vec<f32>>, vector index by_look\"",
        "        N stock \"u32, filter of vector index by_look\"",
        "        S pk \"pk: _unique#code#<sku>\"",
        "    Product ||--o| Product_unique_sku : \"unique sku (scope code)\"",
    ] {
        assert!(text.lines().any(|l| l == want), "missing {want}\n{text}");
    }
    // Brand declares none of it.
    let brand = text.split("    Brand {").nth(1).and_then(|b| b.split("    }").next());
    let brand = brand.expect("Brand's box");
    assert!(!brand.contains("_v") && !brand.contains("vector") && !brand.contains("Time to"));

    // Workbench: the sentinel facets, the attribute types, the description.
    let json = model.workbench(DATE);
    let table = &json["DataModel"][0];
    let attributes: Vec<(&str, &str)> = table["NonKeyAttributes"]
        .as_array()
        .expect("NonKeyAttributes")
        .iter()
        .map(|a| {
            (a["AttributeName"].as_str().expect("name"), a["AttributeType"].as_str().expect("type"))
        })
        .collect();
    for want in [
        ("_v", "N"),
        ("expires", "N"),
        ("look", "L"),
        ("stock", "N"),
        ("_owner_pk", "S"),
        ("_owner_sk", "S"),
    ] {
        assert!(attributes.contains(&want), "{want:?} in {attributes:?}");
    }
    let names: Vec<&str> = attributes.iter().map(|(n, _)| *n).collect();
    let facets = table["TableFacets"].as_array().expect("TableFacets");
    let facet_names: Vec<&str> =
        facets.iter().map(|f| f["FacetName"].as_str().expect("name")).collect();
    assert_eq!(
        facet_names,
        ["Product", "Product:unique(sku)", "Product:unique(brand, model)", "Brand"]
    );
    for facet in facets {
        for attr in facet["NonKeyAttributes"].as_array().expect("facet attributes") {
            let attr = attr.as_str().expect("attribute name");
            assert!(names.contains(&attr), "{attr} of {} not in the table", facet["FacetName"]);
        }
    }
    assert_eq!(facets[1]["KeyAttributeAlias"]["PartitionKeyAlias"], "_unique#code#<sku>");
    assert_eq!(facets[1]["KeyAttributeAlias"]["SortKeyAlias"], "_unique");
    assert_eq!(
        facets[1]["NonKeyAttributes"],
        serde_json::json!(["_type", "_owner_pk", "_owner_sk"])
    );
    let product_attrs = facets[0]["NonKeyAttributes"].as_array().expect("attributes");
    assert!(
        product_attrs.contains(&Value::from("_v"))
            && product_attrs.contains(&Value::from("expires"))
    );
    let description = json["ModelMetadata"]["Description"].as_str().expect("description");
    assert!(description.contains("Time to Live on `expires`"), "{description}");
    assert!(description.contains("Vector index by_look on look: 3 dims, COSINE"), "{description}");

    // Markdown: the search, and the writes of an entity with unique fields.
    let md = model.markdown();
    for want in [
        "| Product | nearest, nearest_by_look: `look` (3 dims, COSINE; `filter` on brand, stock) | `Product::nearest(&db, k, &vector)` | `_type = Product` | by_look | 1 SearchVectors |",
        "| Product | create | `product.create(&db)` | `pk = PRODUCT#<id>, sk = PRODUCT` | table | 1 TransactWriteItems (the item and a sentinel per unique value) |",
        "| Brand | create, put, replace | `brand.create(&db)` | `pk = BRAND#<name>, sk = BRAND` | table | 1 PutItem |",
    ] {
        assert!(md.lines().any(|l| l == want), "missing {want}\n{md}");
    }
    assert!(!md.contains("| Brand | nearest"));
}

/// A table without sort key: the sentinels have none either (and need the type attribute,
/// which the derive requires of a table with unique constraints).
#[derive(Table)]
#[table(name = "bare", no_sort_key)]
struct Bare;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Bare, pk = "ACCOUNT#<id>")]
struct Account {
    id: String,
    #[unique]
    login: String,
}

#[test]
fn sentinels_on_a_table_without_sort_key() {
    let model = TableModel::of::<Bare>().entity::<Account>();
    let sentinels = model.unique_sentinels(&model.entities[0]);
    assert_eq!(sentinels.len(), 1);
    assert_eq!(
        (sentinels[0].sentinel_pk.as_str(), sentinels[0].sentinel_sk),
        ("_unique#Account.login#<login>", None)
    );
    let key = ddb_model::ops::unique::sentinel_key::<Account>(&sentinels[0].def, "v");
    assert_eq!(key.expect("a key"), ("_unique#Account.login#v".to_owned(), None));
    let text = model.mermaid();
    assert_eq!(mermaid_boxes(&text), ["Account", "Account_unique_login"]);
    let sentinel =
        text.split("    Account_unique_login {").nth(1).and_then(|b| b.split("    }").next());
    let sentinel = sentinel.expect("the sentinel's box");
    assert_eq!(
        sentinel.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>(),
        [
            "S pk \"pk: _unique#Account.login#<login>\"",
            "S _type \"entity type: Account:unique\"",
            "S _owner_pk \"the owner's pk\""
        ]
    );
    let json = model.workbench(DATE);
    let facets = json["DataModel"][0]["TableFacets"].as_array().expect("facets").clone();
    assert_eq!(facets.len(), 2);
    assert!(facets[1]["KeyAttributeAlias"].get("SortKeyAlias").is_none());
    assert_eq!(facets[1]["NonKeyAttributes"], serde_json::json!(["_type", "_owner_pk"]));
    let md = model.markdown();
    assert!(md.contains("| Account | create | `account.create(&db)` | `pk = ACCOUNT#<id>` | table | 1 TransactWriteItems"), "{md}");
}

/// The requests a pattern's text states before any parenthesis: `1 consistent GetItem + 1
/// TransactWriteItems` -> GetItem 1, TransactWriteItems 1.
fn stated(requests: &str) -> Vec<(Op, u64)> {
    let head = requests.split(" (").next().unwrap_or(requests);
    let head = head.split(" freeing").next().unwrap_or(head);
    head.split(" + ")
        .map(|part| {
            let n: u64 = part.split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
            let name = part.rsplit(' ').next().expect("an operation");
            let op = Op::ALL.into_iter().find(|op| op.name() == name).expect("a known operation");
            (op, n)
        })
        .collect()
}

fn row<'m>(model: &'m TableModel, entity: &str, name: &str) -> &'m str {
    model
        .patterns()
        .find(|(e, p)| e.name == entity && p.name.starts_with(name))
        .map(|(_, p)| p.requests.as_str())
        .unwrap_or_else(|| panic!("no row {entity} {name}"))
}

fn sent<T: Table>(db: &Db<T>) -> Vec<(Op, u64)> {
    let requests = db.requests();
    Op::ALL.into_iter().map(|op| (op, requests.get(op))).filter(|(_, n)| *n > 0).collect()
}

#[derive(Table)]
#[table(name = "members")]
struct Members;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Members, pk = "MEMBER#<id>", sk = "MEMBER")]
struct Member {
    id: String,
    #[unique]
    email: String,
    nick: String,
    /// A shared scope with punctuation.
    #[unique(scope = "member-handle.v1")]
    handle: Option<String>,
}

/// The Markdown's costs of an entity with a unique field are what its writes send.
#[tokio::test]
async fn unique_write_costs_are_the_requests_sent() -> Result<(), Error> {
    let model = TableModel::of::<Members>().entity::<Member>();
    let db = crate::support::db::<Members>().await;
    let ann = Member { id: "ann".into(), email: "a@x".into(), nick: "a".into(), handle: None };
    // The sentinel templates are the runtime's keys, escaping included.
    for u in model.unique_sentinels(&model.entities[0]) {
        let (pk, sk) = ddb_model::ops::unique::sentinel_key::<Member>(&u.def, "v#%")?;
        let attr = u.def.attrs[0];
        assert_eq!(u.sentinel_pk.replace(&format!("<{attr}>"), "v#%"), pk, "{}", u.def.field);
        assert_eq!(u.sentinel_sk.map(str::to_owned), sk);
    }
    let sorted = |mut v: Vec<(Op, u64)>| {
        v.sort_by_key(|(op, _)| op.name());
        v
    };
    db.reset_requests();
    ann.create(&db).await?;
    assert_eq!(sorted(sent(&db)), sorted(stated(row(&model, "Member", "create"))));
    db.reset_requests();
    Member { email: "b@x".into(), ..ann.clone() }.put(&db).await?;
    assert_eq!(sorted(sent(&db)), sorted(stated(row(&model, "Member", "put, replace"))));
    db.reset_requests();
    Member::update(&db, "ann").set(Member::EMAIL, "c@x").no_return().await?;
    assert_eq!(sorted(sent(&db)), sorted(stated(row(&model, "Member", "update setting"))));
    db.reset_requests();
    Member::update(&db, "ann").set(Member::NICK, "b").no_return().await?;
    assert_eq!(sorted(sent(&db)), sorted(stated(row(&model, "Member", "update of other"))));
    db.reset_requests();
    Member::delete(&db, "ann").await?;
    assert_eq!(sorted(sent(&db)), sorted(stated(row(&model, "Member", "delete"))));
    // The sentinels were freed: the address can be claimed again.
    Member { id: "bob".into(), ..ann }.create(&db).await?;
    Ok(())
}

/// The Markdown's cost of `nearest` is what a search sends (where the endpoint has vector
/// search: DynamoDB Local has none, and refuses the table).
#[tokio::test]
async fn nearest_cost_is_the_request_sent() -> Result<(), Error> {
    let model = catalog();
    let db = match local::isolated_db::<Catalog>().await {
        Ok(db) => db,
        Err(e) if e.is_vector_search_unsupported() => {
            eprintln!("skipped, the endpoint has no vector search: {e}");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    db.reset_requests();
    let found = Product::nearest(&db, 3, &[1.0, 0.0, 0.0]).await?;
    assert!(found.is_empty());
    assert_eq!(sent(&db), stated(row(&model, "Product", "nearest")));
    Ok(())
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
    let described = described.expect("the table is described");
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
    let described = described.expect("the table is described");
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

/// Wrong command lines: clap's errors, each of its kind, with the usage and exit code 2;
/// the mistakes found after parsing (no client, no such migration) are reported alike.
#[tokio::test]
async fn cli_usage_errors() {
    use clap::error::ErrorKind::*;
    let cli = Cli::new(model()).migration(Count::default());
    for (bad, kind) in [
        (&[][..], DisplayHelpOnMissingArgumentOrSubcommand),
        (&["drop"], InvalidSubcommand),
        (&["mermaid", "--table", "x"], UnknownArgument),
        (&["create-table"], MissingRequiredArgument),
        (&["create-table", "--endpoint"], InvalidValue),
        (&["create-table", "--table", ""], InvalidValue),
        (&["create-table", "--endpoint", "http://x", "extra"], UnknownArgument),
        (&["migrate", "nothing-registered", "--endpoint", "http://x"], InvalidValue),
        (&["rekey", "count", "--endpoint", "http://x"], InvalidValue), // `count` is a schema one
        (&["create-table", "--endpoint", "http://x", "--warm", "12000"], ValueValidation),
        (&["create-table", "--endpoint", "http://x", "--max-on-demand", "a,b"], ValueValidation),
        (&["create-table", "--deletion-protection", "--deletion-protection"], ArgumentConflict),
        (&["create-table", "--table", "a", "--table", "b"], ArgumentConflict),
        (&["migrate", "--endpoint", "http://x", "--deletion-protection"], UnknownArgument),
        (&["mermaid", "--deletion-protection"], UnknownArgument),
        (&["completions", "tcsh"], InvalidValue),
        (&["iam-policy"], InvalidSubcommand),
    ] {
        let err = cli.run_with(&args(bad), &mut Vec::new()).await.expect_err("a usage error");
        let CliError::Usage(e) = &err else { panic!("{bad:?}: {err}") };
        assert_eq!(e.kind(), kind, "{bad:?}: {err}");
        assert_eq!(e.exit_code(), 2, "{bad:?}");
        let text = err.to_string();
        assert!(text.contains("Usage: model-tool") || text.contains("try '--help'"), "{text}");
    }
    let err = cli.run_with(&args(&["create-table"]), &mut Vec::new()).await.expect_err("no client");
    assert!(err.to_string().contains("pass --endpoint"), "{err}");
}

/// `--help` of the tool and of a command, against golden files; `help` is not a command.
#[tokio::test]
async fn cli_help_matches_its_golden_files() -> Result<(), CliError> {
    let cli = Cli::new(model());
    for (command, file) in [
        (&["--help"][..], "tool-help.txt"),
        (&["create-table", "--help"], "tool-create-table-help.txt"),
    ] {
        let mut out = Vec::new();
        cli.run_with(&args(command), &mut out).await?;
        golden(file, &String::from_utf8_lossy(&out));
    }
    let mut short = Vec::new();
    cli.run_with(&args(&["-h"]), &mut short).await?;
    assert!(String::from_utf8_lossy(&short).contains("rekey"));
    assert!(cli.run_with(&args(&["help"]), &mut Vec::new()).await.is_err());
    Ok(())
}

/// `completions SHELL` prints a script that completes the commands and their flags.
#[tokio::test]
async fn cli_prints_shell_completions() -> Result<(), CliError> {
    let cli = Cli::new(model());
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let mut out = Vec::new();
        cli.run_with(&args(&["completions", shell]), &mut out).await?;
        let script = String::from_utf8_lossy(&out);
        for word in ["create-table", "rebuild", "max-on-demand", "model-tool"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    Ok(())
}

/// A migration for the test of the extension point: reports 3 steps of 10 items; its kind
/// is the one given (`migrate` without).
#[derive(Default)]
struct Count(Arc<AtomicU64>, Option<MigrationKind>);

impl Migration for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "counts to thirty"
    }
    fn kind(&self) -> MigrationKind {
        self.1.unwrap_or(MigrationKind::Schema)
    }
    fn run<'a>(
        &'a self,
        client: Client,
        table: &'a str,
        progress: &'a mut (dyn FnMut(MigrationProgress) + Send),
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            client.describe_table().table_name(table).send().await.map_err(|e| Error::Sdk {
                operation: Op::DescribeTable,
                source: Box::new(e.into()),
            })?;
            for step in 1..=3 {
                progress(MigrationProgress { done: step * 10, total: Some(30) });
                self.0.store(step * 10, Ordering::SeqCst);
            }
            Ok(())
        })
    }
}

/// Each of `migrate`, `rekey` and `rebuild` lists and runs the registered migrations of its
/// kind only; a run reports the items done (the bar is hidden: stderr is not a terminal).
#[tokio::test]
async fn cli_runs_registered_migrations() -> Result<(), CliError> {
    let done = Arc::new(AtomicU64::new(0));
    let rebuilt = Arc::new(AtomicU64::new(0));
    let cli = Cli::new(model())
        .migration(Count(done.clone(), None))
        .migration(Count(rebuilt.clone(), Some(MigrationKind::Rebuild)));
    for (command, listed) in [
        ("migrate", "count\tcounts to thirty\n"),
        ("rebuild", "count\tcounts to thirty\n"),
        ("rekey", "no `rekey` migrations registered\n"),
    ] {
        let mut out = Vec::new();
        cli.run_with(&args(&[command]), &mut out).await?;
        assert_eq!(String::from_utf8_lossy(&out), listed, "{command}");
    }

    let db = crate::support::db::<Shop>().await;
    let endpoint = local::endpoint()?;
    let mut out = Vec::new();
    let run = args(&["migrate", "count", "--endpoint", &endpoint, "--table", db.table_name()]);
    cli.run_with(&run, &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), "migration `count` finished: 30 items\n");
    assert_eq!((done.load(Ordering::SeqCst), rebuilt.load(Ordering::SeqCst)), (30, 0));
    let run = args(&["rebuild", "count", "--endpoint", &endpoint, "--table", db.table_name()]);
    cli.run_with(&run, &mut Vec::new()).await?;
    assert_eq!(rebuilt.load(Ordering::SeqCst), 30);
    // A migration that fails is the command's error, not a usage error.
    let missing = args(&["migrate", "count", "--endpoint", &endpoint, "--table", "no-such-table"]);
    let err = cli.run_with(&missing, &mut Vec::new()).await.expect_err("no such table");
    assert!(matches!(err, CliError::Ddb(_)), "{err}");
    Ok(())
}
