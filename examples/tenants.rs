//! Tenant isolation by construction: a SaaS table whose tenants are organizations.
//!
//! - the model says which key part is the tenant: `#[table(tenant = "ORG#")]` (the literal
//!   before the tenant id) and `#[entity(tenant = org)]` (the field), checked at compile time
//!   against every partition key of the entity, its indexes' included;
//! - `db.for_tenant("acme")` is a handle through which every request stays inside acme's
//!   partitions: another organization's key, a global item, another tenant's cursor or a
//!   scan is `Error::OutsideTenant` before anything is sent;
//! - the model tool exports the IAM policy that enforces the same at the service
//!   (`dynamodb:LeadingKeys`), for code that does not go through the library.
//!
//!     cargo run --example tenants
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local).

use ddb_model::error::TenantProblem;
use ddb_model::prelude::*;
use ddb_model::tooling::{PolicyTarget, TableModel};
use ddb_model::{Error, local};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Saas;

/// A member of an organization, found by email within it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "USER#<id>", tenant = org)]
#[index(gsi1, pk = "ORG#<org>#EMAIL", sk = "<email>")]
struct User {
    org: String,
    id: String,
    email: String,
}

/// An organization's folders: a tree kept in its partition.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "FOLDER#<id>", tenant = org)]
#[hierarchy(strategy = closure, parent = parent)]
struct Folder {
    org: String,
    id: String,
    parent: Option<String>,
}

/// A price plan: a global item, shared by every organization and outside each one's
/// partitions.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "PLAN#<name>", sk = "PLAN")]
struct Plan {
    name: String,
    seats: u32,
}

fn user(org: &str, id: &str) -> User {
    User { org: org.into(), id: id.into(), email: format!("{id}@{org}.example") }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<Saas>().await?;
    // The back office (unscoped) sets up the plans and both organizations.
    Plan { name: "pro".into(), seats: 50 }.create(&db).await?;
    db.batch_write().put(&user("acme", "ann")).put(&user("globex", "gil")).await?;

    // A request handler for acme gets a handle scoped to acme.
    let acme = db.clone().for_tenant("acme");
    user("acme", "bob").create(&acme).await?;
    let members = User::query(&acme, "acme").all().await?;
    println!("acme's members: {:?}", members.iter().map(|u| &u.id).collect::<Vec<_>>());
    assert_eq!(members.len(), 2);
    let by_email = User::query_gsi1(&acme, "acme").email("bob@acme.example").first().await?;
    assert_eq!(by_email.map(|u| u.id).as_deref(), Some("bob"));
    let folders = Folder::tree(&acme, "acme");
    folders.insert(&Folder { org: "acme".into(), id: "root".into(), parent: None }).await?;
    folders
        .insert(&Folder { org: "acme".into(), id: "specs".into(), parent: Some("root".into()) })
        .await?;
    println!("acme's folders under root: {}", folders.children("root").all().await?.len());

    // A bug that builds globex's key (a tenant id taken from the request body, say) is
    // refused before anything is sent, whatever the operation.
    let before = acme.requests();
    let refused = [
        User::get(&acme, "globex", "gil").await.map(drop),
        User::delete(&acme, "globex", "gil").await.map(drop),
        User::query(&acme, "globex").all().await.map(drop),
        acme.transaction().create(&user("globex", "mallory")).await.map(drop),
        // A tenant id that only starts like acme's is another tenant.
        User::query(&acme, "acme2").all().await.map(drop),
        // Global items, and scans (which read every partition), are outside too.
        Plan::get(&acme, "pro").await.map(drop),
        acme.scan::<User>().all().await.map(drop),
    ];
    for result in refused {
        match result {
            Err(Error::OutsideTenant { tenant, problem }) => {
                assert_eq!(tenant, "acme");
                match problem {
                    TenantProblem::ForeignKey { operation, value, .. } => {
                        println!("refused: {operation:?} of {value}");
                    }
                    other => println!("refused: {other}"),
                }
            }
            other => return Err(format!("expected OutsideTenant, got {other:?}").into()),
        }
    }
    assert_eq!((acme.requests() - before).total(), 0, "nothing was sent");
    assert!(User::get(&db, "globex", "gil").await?.is_some(), "globex's member is untouched");

    // The same confinement at the service, for every principal of a tenant: the IAM policy
    // exported from the model (also `iam-policy` of the model tool's command line).
    let model = TableModel::of::<Saas>().entity::<User>().entity::<Folder>().entity::<Plan>();
    let mut target = PolicyTarget::new("saas");
    target.tenant_key = "aws:PrincipalTag/org".into();
    let policy = model.tenant_policy(&target).ok_or("the table has tenants")?;
    let statements = policy["Statement"].as_array().ok_or("statements")?;
    for statement in statements {
        let leading = &statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"];
        println!("{}: {}", statement["Resource"], leading[0]);
    }
    assert_eq!(statements.len(), 2, "the table and gsi1");
    Ok(())
}
