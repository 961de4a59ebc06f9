//! Adopting a table that other code laid out: the path pattern for folders, where each item
//! is one folder keyed by its own id, and an index on the folder's drive (`Root`) and its
//! parent's path (`Path`, such as `/V/d/`) finds the folders directly under a folder (`Path =
//! /V/`) or anywhere below it (`Path begins_with /V/`). Drives have neither attribute, so the
//! index holds folders only. No item has an entity-type attribute, and no value is escaped.
//!
//! The program creates that table and its items with plain SDK calls, as the other code
//! does, then reads and writes it through a typed entity, and shows that the other code's
//! own queries find what the typed API wrote.
//!
//!     cargo run --example adopt
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use std::collections::HashMap;

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, ScalarAttributeType,
};
use ddb_model::local;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

/// The table as the other code declared it: partition key `ID`, no sort key, index `gsi1` on
/// `Root` and `Path`, and no attribute naming the entity type.
#[derive(Table)]
#[table(
    name = "folders",
    pk = "ID",
    no_sort_key,
    no_type_attr,
    gsi(name = "gsi1", pk = "Root", sk = "Path")
)]
struct Folders;

/// One folder. Its id *is* the key attribute `ID`, its drive and parent path *are* `Root` and
/// `Path`: `from_key` fields are read back from the keys instead of stored twice, and
/// `:verbatim` writes their values as they are (a `/` stays a `/`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Folders, pk = "<id:verbatim>")]
#[index(gsi1, pk = "<root:verbatim>", sk = "<path:verbatim>")]
struct Folder {
    #[entity(from_key)]
    id: String,
    /// The drive; `None` for a drive itself, which is then not in the index.
    #[entity(from_key)]
    root: Option<String>,
    /// The path of the folder's parent, from the drive: `/` for a folder on the drive.
    #[entity(from_key)]
    path: Option<String>,
    #[serde(rename = "Folder Name")]
    name: String,
}

/// (ID, Root, Path, Folder Name) as the other code writes them; drives have no Root or Path.
const ROWS: [(&str, &str, &str, &str); 15] = [
    ("C", "", "", "Drive C"),
    ("I", "C", "/", "Folder I"),
    ("II", "C", "/", "Folder II"),
    ("D", "", "", "Drive D"),
    ("III", "D", "/", "Folder III"),
    ("a", "D", "/III/", "Folder a"),
    ("b", "D", "/III/", "Folder b"),
    ("IV", "D", "/", "Folder IV"),
    ("c", "D", "/IV/", "Folder c"),
    ("V", "D", "/", "Folder V"),
    ("d", "D", "/V/", "Folder d"),
    ("i", "D", "/V/d/", "Folder i"),
    ("ii", "D", "/V/d/", "Folder ii"),
    ("iii", "D", "/V/d/", "Folder iii"),
    ("e", "D", "/V/", "Folder e"),
];

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

/// What the other code does: create the table and put the rows, with the SDK alone.
async fn other_code_creates(
    client: &Client,
    table: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
    };
    let key =
        |name: &str, kind| KeySchemaElement::builder().attribute_name(name).key_type(kind).build();
    client
        .create_table()
        .table_name(table)
        .attribute_definitions(attr("ID")?)
        .attribute_definitions(attr("Root")?)
        .attribute_definitions(attr("Path")?)
        .key_schema(key("ID", KeyType::Hash)?)
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("gsi1")
                .key_schema(key("Root", KeyType::Hash)?)
                .key_schema(key("Path", KeyType::Range)?)
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()?,
        )
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await?;
    for (id, root, path, name) in ROWS {
        let mut item =
            HashMap::from([("ID".to_owned(), s(id)), ("Folder Name".to_owned(), s(name))]);
        if !root.is_empty() {
            item.insert("Root".to_owned(), s(root));
            item.insert("Path".to_owned(), s(path));
        }
        client.put_item().table_name(table).set_item(Some(item)).send().await?;
    }
    Ok(())
}

/// The other code's query of the folders directly under `path` on drive `root`.
async fn other_code_lists(
    client: &Client,
    table: &str,
    root: &str,
    path: &str,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let out = client
        .query()
        .table_name(table)
        .index_name("gsi1")
        .key_condition_expression("#root = :root AND #path = :path")
        .expression_attribute_names("#root", "Root")
        .expression_attribute_names("#path", "Path")
        .expression_attribute_values(":root", s(root))
        .expression_attribute_values(":path", s(path))
        .send()
        .await?;
    Ok(out.items().iter().filter_map(|i| i.get("Folder Name")?.as_s().ok().cloned()).collect())
}

fn names(folders: &[Folder]) -> Vec<&str> {
    folders.iter().map(|f| f.name.as_str()).collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = local::client()?;
    let table = format!("folders-{}", std::process::id());
    other_code_creates(&client, &table).await?;
    let db = Db::<Folders>::with_table_name(client.clone(), &table);

    // The other code's reads, typed.
    let d = Folder::get(&db, "d").await?;
    println!("folder d:        {d:?}");
    let under_v = Folder::query_gsi1(&db, "D").path("/V/").all().await?;
    println!("directly under V: {:?}", names(&under_v));
    let below_v = Folder::query_gsi1(&db, "D").path_begins_with("/V/").all().await?;
    println!("anywhere below V: {:?}", names(&below_v));
    let drives: Vec<Folder> =
        db.scan::<Folder>().all().await?.into_iter().filter(|f| f.root.is_none()).collect();
    println!("drives:          {:?}", names(&drives));

    // A typed write is an item the other code reads as its own.
    let iv = Folder {
        id: "iv".into(),
        root: Some("D".into()),
        path: Some("/V/d/".into()),
        name: "Folder iv".into(),
    };
    iv.create(&db).await?;
    let raw = client.get_item().table_name(&table).key("ID", s("iv")).send().await?.item;
    let mut attrs: Vec<String> = raw.unwrap_or_default().into_keys().collect();
    attrs.sort();
    println!("stored item iv:  {attrs:?}");
    let listed = other_code_lists(&client, &table, "D", "/V/d/").await?;
    println!("other code lists under d: {listed:?}");

    // A key the service would reject, or one that would read back as other values, is
    // refused before anything is sent: here an empty id.
    let err = Folder { id: "".into(), root: None, path: None, name: "x".into() }
        .create(&db)
        .await
        .map(|()| "written");
    println!("an empty id:     {err:?}");

    assert_eq!(names(&under_v), ["Folder d", "Folder e"]);
    assert_eq!(below_v.len(), 5);
    assert_eq!(attrs, ["Folder Name", "ID", "Path", "Root"]);
    assert!(listed.contains(&"Folder iv".to_owned()));
    client.delete_table().table_name(&table).send().await?;
    Ok(())
}
