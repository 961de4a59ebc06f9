//! An org chart as a closure tree: employees addressed by id, each copied under every manager
//! above them with the number of levels between them, so that "everyone within two levels of
//! the CTO" is one query reading exactly those people. Prints the requests each step took.
//!
//!     cargo run --example org_chart
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use ddb_model::prelude::*;
use ddb_model::{RequestStats, local, tree::ClosureTree};
use serde::{Deserialize, Serialize};

/// An employee: the organisation names the tree, the id the node, `manager` the parent.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager, max_depth = 16)]
struct Employee {
    org: String,
    id: String,
    manager: Option<String>,
    name: String,
    title: String,
}

fn step(db: &Db, what: &str, before: RequestStats) {
    let used = db.requests() - before;
    println!("  -> {what}: {used}; {} items read", used.items_read());
}

fn names(people: &[Employee]) -> String {
    people.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// (id, manager, name, title)
const STAFF: &[(&str, Option<&str>, &str, &str)] = &[
    ("ceo", None, "Ada", "CEO"),
    ("cto", Some("ceo"), "Brian", "CTO"),
    ("cfo", Some("ceo"), "Chen", "CFO"),
    ("eng1", Some("cto"), "Dana", "Engineering manager"),
    ("eng2", Some("cto"), "Emil", "Engineering manager"),
    ("dev1", Some("eng1"), "Femi", "Engineer"),
    ("dev2", Some("eng1"), "Gia", "Engineer"),
    ("dev3", Some("eng2"), "Hugo", "Engineer"),
    ("intern", Some("dev3"), "Ines", "Intern"),
    ("acct", Some("cfo"), "Jon", "Accountant"),
];

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db: Db = local::isolated_db().await?;
    let org: ClosureTree<'_, Employee> = Employee::tree(&db, "acme");

    println!(
        "Hiring {} people (each insert: one read of the manager, one transaction):",
        STAFF.len()
    );
    let before = db.requests();
    for (id, manager, name, title) in STAFF {
        let e = Employee {
            org: "acme".into(),
            id: (*id).into(),
            manager: manager.map(Into::into),
            name: (*name).into(),
            title: (*title).into(),
        };
        org.insert(&e).await?;
    }
    step(&db, "inserts", before);

    println!("\nDirect reports of the CTO:");
    let before = db.requests();
    let reports = org.children("cto").all().await?;
    println!("  {}", names(&reports));
    step(&db, "one query", before);

    println!("\nEveryone within 2 levels of the CTO:");
    let before = db.requests();
    let near = org.descendants("cto").depth(1..=2).all().await?;
    println!("  {}", names(&near));
    step(&db, "one query, exactly these people read", before);

    println!("\nEveryone at least 2 levels below the CEO:");
    let before = db.requests();
    let deep = org.descendants("ceo").depth(2..).all().await?;
    println!("  {}", names(&deep));
    step(&db, "one query", before);

    println!("\nReporting chain of the intern:");
    let before = db.requests();
    let chain = org.breadcrumbs("intern").await?;
    let chain: Vec<String> = chain.iter().map(|e| format!("{} ({})", e.name, e.title)).collect();
    println!("  {}", chain.join(" -> "));
    step(&db, "the intern's own copy names the managers, one batch read", before);

    println!("\nHeadcount under the CTO, and people at each level:");
    let before = db.requests();
    println!("  under the CTO: {}", org.subtree_size("cto").await? - 1);
    for level in 1..=5 {
        let people = org.at_depth(level).all().await?;
        println!("  level {level}: {}", names(&people));
    }
    step(&db, "one count query, one query per level", before);

    println!(
        "\nPromotion: Emil becomes VP Engineering (the node and its copies, one transaction):"
    );
    let before = db.requests();
    let mut emil =
        org.get("eng2").await?.ok_or(Error::NotFound { entity: "Employee", key: "eng2".into() })?;
    emil.title = "VP Engineering".into();
    org.replace(&emil).await?;
    let seen = org.children("cto").all().await?;
    let titles: Vec<String> = seen.iter().map(|e| format!("{}: {}", e.name, e.title)).collect();
    println!("  the CTO's reports now: {}", titles.join(", "));
    step(&db, "get, replace, children", before);

    println!("\nReorganisation: Emil's team moves under the CFO:");
    let before = db.requests();
    let report = org.move_subtree("eng2", "cfo").await?;
    println!("  moved {} people", report.nodes);
    step(&db, "reads of the team and one transaction", before);
    let near = org.descendants("cfo").depth(1..=2).all().await?;
    println!("  within 2 levels of the CFO: {}", names(&near));
    let chain = org.breadcrumbs("intern").await?;
    println!("  the intern now reports through: {}", names(&chain));

    println!("\nThe CTO's part of the company closes (its subtree is deleted):");
    let before = db.requests();
    let report = org.delete_subtree("cto").await?;
    println!("  {} people removed", report.nodes);
    step(&db, "reads and one transaction", before);
    println!("  left: {}", names(&org.nodes().all().await?));
    Ok(())
}
