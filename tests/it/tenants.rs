//! Tenant isolation by construction (`#[table(tenant = "ORG#")]`, `#[entity(tenant = org)]`,
//! `db.for_tenant(..)`): every request of a scoped handle lies inside the tenant's
//! partitions. Own keys pass every kind of operation; another tenant's keys, a global
//! entity's keys, another tenant's cursor and whole-table reads are refused before sending,
//! and nothing is written. A property test crafts tenant ids that are prefixes of each
//! other, hold separators or escapes, and checks every kind of operation against the model
//! "own exactly when the ids are equal".

use ddb_model::error::TenantProblem;
use ddb_model::prelude::*;
use ddb_model::{Collection, Cursor, Db, Edge, Entity, Error, Op, Table};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::no_request;
use crate::support::{self, snapshot_keys};

#[derive(Table)]
#[table(name = "tenants", tenant = "ORG#", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Saas;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "USER#<id>", tenant = org)]
#[index(gsi1, pk = "ORG#<org>#EMAIL", sk = "<email>")]
struct User {
    org: String,
    id: String,
    email: String,
    #[serde(default)]
    logins: u32,
}

impl User {
    fn new(org: &str, id: &str) -> User {
        User { org: org.into(), id: id.into(), email: format!("{id}@example.com"), logins: 0 }
    }
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<org>#PROJECT#<project>", sk = "TASK#<id>", tenant = org)]
struct Task {
    org: String,
    project: String,
    id: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "DIR#<id>", tenant = org)]
#[hierarchy(strategy = closure, parent = parent)]
struct Dir {
    org: String,
    id: String,
    parent: Option<String>,
}

/// Partnerships between organizations: the forward item in the partner's organization, the
/// inverse item in the other one's.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "ORG#<from>", sk = "PARTNER#<to>", tenant = from)]
#[edge(from = from, to = to, inverse(pk = "ORG#<to>", sk = "PARTNER_OF#<from>"))]
struct Partner {
    from: String,
    to: String,
}

/// A global item: not tenant-scoped.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Saas, pk = "PLAN#<name>", sk = "PLAN")]
struct Plan {
    name: String,
    seats: u32,
}

#[derive(Collection, Debug, Clone, PartialEq)]
enum OrgItems {
    User(User),
    Dir(Dir),
}

/// The tenant-scoped error's problem, or a panic naming what came instead.
fn outside<T>(result: Result<T, Error>, tenant: &str) -> TenantProblem {
    match result {
        Err(Error::OutsideTenant { tenant: t, problem }) if t == tenant => problem,
        Err(e) => panic!("expected OutsideTenant of {tenant}, got {e:?}"),
        Ok(_) => panic!("expected OutsideTenant of {tenant}, got Ok"),
    }
}

fn foreign_key(problem: &TenantProblem) -> (Op, &str, &str) {
    match problem {
        TenantProblem::ForeignKey { operation, attribute, value } => (*operation, attribute, value),
        other => panic!("expected ForeignKey, got {other:?}"),
    }
}

#[tokio::test]
async fn own_keys_pass_every_kind_of_operation() -> Result<(), Error> {
    let db = support::db::<Saas>().await;
    let acme = db.clone().for_tenant("acme");
    assert_eq!((acme.tenant(), db.tenant()), (Some("acme"), None));

    // Single-item writes and reads.
    let mut ann = User::new("acme", "ann");
    ann.create(&acme).await?;
    ann.logins = 1;
    ann.put(&acme).await?;
    ann.replace(&acme).await?;
    User::update(&acme, "acme", "ann").add(User::LOGINS, 1).await?;
    User::update(&acme, "acme", "cid").upsert().set(User::EMAIL, "cid@example.com").await?;
    assert_eq!(User::get(&acme, "acme", "ann").await?.map(|u| u.logins), Some(2));
    User::delete(&acme, "acme", "cid").await?;

    // Batches and transactions.
    let tasks: Vec<Task> = (0..3)
        .map(|i| Task { org: "acme".into(), project: "p".into(), id: format!("t{i}") })
        .collect();
    acme.batch_write().put_all(&tasks).put(&User::new("acme", "bob")).await?;
    let read = acme.batch_get([Task::key("acme", "p", "t0"), Task::key("acme", "p", "t2")]).await?;
    assert_eq!(read.iter().flatten().count(), 2);
    acme.transaction()
        .create(&User::new("acme", "dan"))
        .update(User::key("acme", "bob"), |u| u.add(User::LOGINS, 5))
        .delete(Task::key("acme", "p", "t1"))
        .check_not_exists(User::key("acme", "eve"))
        .await?;
    let mut get = acme.transact_get();
    let bob = get.get(User::key("acme", "bob"));
    let got = get.await?;
    assert_eq!(got.get(&bob)?.map(|u| u.logins), Some(5));

    // Queries: the table, an index, a collection, pages and their cursors.
    let users = User::query(&acme, "acme").all().await?;
    assert_eq!(users.len(), 3, "{users:?}");
    let by_email = User::query_gsi1(&acme, "acme").all().await?;
    assert_eq!(by_email.len(), 3);
    let mut cursor: Option<Cursor> = None;
    let mut paged = 0;
    loop {
        let page = User::query(&acme, "acme").limit(1).page(cursor.as_ref()).await?;
        paged += page.items.len();
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, 3);

    // A tree, and an edge whose both items lie in the tenant's partition.
    let tree = Dir::tree(&acme, "acme");
    tree.insert(&Dir { org: "acme".into(), id: "root".into(), parent: None }).await?;
    tree.insert(&Dir { org: "acme".into(), id: "docs".into(), parent: Some("root".into()) })
        .await?;
    assert_eq!(tree.children("root").all().await?.len(), 1);
    let items = User::partition(&acme, "acme").collection_only::<OrgItems>().all().await?;
    assert_eq!(items.len(), 5, "three users and two directories: {items:?}");
    let partners = Partner::edges(&acme);
    partners.link(&Partner { from: "acme".into(), to: "acme".into() }).await?;
    assert_eq!(partners.outgoing("acme").all().await?.len(), 1);
    partners.unlink("acme", "acme").await?;

    // The unscoped handle sees the same items.
    assert_eq!(User::query(&db, "acme").all().await?.len(), 3);
    Ok(())
}

#[tokio::test]
async fn another_tenants_keys_are_refused_before_sending_and_nothing_is_written()
-> Result<(), Error> {
    let db = support::db::<Saas>().await;
    User::new("globex", "gil").create(&db).await?;
    let before = snapshot_keys(&db).await;
    let acme = db.clone().for_tenant("acme");
    let gil = || User::new("globex", "gil");

    let p = no_request!(acme, outside(gil().create(&acme).await, "acme"));
    assert_eq!(foreign_key(&p), (Op::PutItem, "pk", "ORG#globex"));
    no_request!(acme, outside(gil().put(&acme).await, "acme"));
    no_request!(acme, outside(gil().replace(&acme).await, "acme"));
    let p = no_request!(acme, outside(User::get(&acme, "globex", "gil").await, "acme"));
    assert_eq!(foreign_key(&p), (Op::GetItem, "pk", "ORG#globex"));
    let update = User::update(&acme, "globex", "gil").add(User::LOGINS, 1).await;
    assert_eq!(foreign_key(&no_request!(acme, outside(update, "acme"))).0, Op::UpdateItem);
    let upsert = User::update(&acme, "globex", "x").upsert().set(User::EMAIL, "x").await;
    no_request!(acme, outside(upsert, "acme"));
    let delete = User::delete(&acme, "globex", "gil").await;
    assert_eq!(foreign_key(&no_request!(acme, outside(delete, "acme"))).0, Op::DeleteItem);

    // One foreign action refuses the whole batch or transaction.
    let batch = acme.batch_write().put(&User::new("acme", "ann")).put(&gil()).await;
    no_request!(acme, outside(batch, "acme"));
    let batch = acme.batch_write().delete(User::key("globex", "gil")).await;
    no_request!(acme, outside(batch, "acme"));
    let read = acme.batch_get([User::key("acme", "ann"), User::key("globex", "gil")]).await;
    assert_eq!(foreign_key(&no_request!(acme, outside(read, "acme"))).0, Op::BatchGetItem);
    let tx = acme
        .transaction()
        .create(&User::new("acme", "ann"))
        .check_not_exists(User::key("globex", "zed"))
        .await;
    no_request!(acme, outside(tx, "acme"));
    let tx = acme.transaction().delete(User::key("globex", "gil")).await;
    no_request!(acme, outside(tx, "acme"));
    let mut get = acme.transact_get();
    get.get(User::key("globex", "gil"));
    let p = no_request!(acme, outside(get.await, "acme"));
    assert_eq!(foreign_key(&p).0, Op::TransactGetItems);

    // Queries of another tenant's partitions, on the table and on an index.
    let p = no_request!(acme, outside(User::query(&acme, "globex").all().await, "acme"));
    assert_eq!(foreign_key(&p), (Op::Query, "pk", "ORG#globex"));
    let p = no_request!(acme, outside(User::query_gsi1(&acme, "globex").all().await, "acme"));
    assert_eq!(foreign_key(&p), (Op::Query, "gsi1pk", "ORG#globex#EMAIL"));
    let query = User::partition(&acme, "globex").collection_only::<OrgItems>().all().await;
    no_request!(acme, outside(query, "acme"));

    // Trees and edges of another tenant, and an edge whose inverse item is another's.
    let tree = Dir::tree(&acme, "globex");
    let insert = tree.insert(&Dir { org: "globex".into(), id: "r".into(), parent: None }).await;
    no_request!(acme, outside(insert, "acme"));
    no_request!(acme, outside(tree.children("r").all().await, "acme"));
    let partners = Partner::edges(&acme);
    let cross = Partner { from: "acme".into(), to: "globex".into() };
    let p = no_request!(acme, outside(partners.link(&cross).await, "acme"));
    assert_eq!(foreign_key(&p).2, "ORG#globex");
    no_request!(acme, outside(partners.outgoing("globex").all().await, "acme"));

    assert_eq!(snapshot_keys(&db).await, before, "nothing was written");
    Ok(())
}

#[tokio::test]
async fn ids_that_share_a_prefix_or_hold_separators_are_other_tenants() -> Result<(), Error> {
    let db = support::db::<Saas>().await;
    let acme = db.clone().for_tenant("acme");
    for other in ["acme2", "acm", "acme#x", "acme%23x", "acme:x", "ACME", ""] {
        let user = User::new(other, "u");
        let p = no_request!(acme, outside(user.create(&acme).await, "acme"));
        assert_eq!(foreign_key(&p).0, Op::PutItem, "{other:?}");
        no_request!(acme, outside(User::query(&acme, other).all().await, "acme"));
    }
    // A tenant whose id holds separators and escapes has its own partitions too.
    let odd = db.clone().for_tenant("acme#x%");
    User::new("acme#x%", "u").create(&odd).await?;
    assert_eq!(User::query(&odd, "acme#x%").all().await?.len(), 1);
    no_request!(odd, outside(User::query(&odd, "acme").all().await, "acme#x%"));
    Ok(())
}

#[tokio::test]
async fn a_cursor_of_another_tenants_query_is_refused() -> Result<(), Error> {
    let db = support::db::<Saas>().await;
    for org in ["acme", "globex"] {
        let users: Vec<User> = (0..3).map(|i| User::new(org, &format!("u{i}"))).collect();
        db.batch_write().put_all(&users).await?;
    }
    let globex = db.clone().for_tenant("globex");
    let page = User::query(&globex, "globex").limit(1).page(None).await?;
    let cursor = page.next.expect("more pages");
    let acme = db.clone().for_tenant("acme");
    let query = User::query(&acme, "acme").limit(1).page(Some(&cursor)).await;
    let p = no_request!(acme, outside(query, "acme"));
    assert_eq!(
        p,
        TenantProblem::ForeignCursor { attribute: "pk".into(), value: "ORG#globex".into() }
    );
    // The unscoped handle refuses it as a cursor of another query.
    let unscoped = User::query(&db, "acme").limit(1).page(Some(&cursor)).await;
    assert!(matches!(unscoped, Err(Error::InvalidCursor { .. })), "{unscoped:?}");
    Ok(())
}

#[tokio::test]
async fn global_items_scans_and_vector_searches_are_outside_every_tenant() -> Result<(), Error> {
    let db = support::db::<Saas>().await;
    let plan = Plan { name: "pro".into(), seats: 10 };
    plan.create(&db).await?;
    let acme = db.clone().for_tenant("acme");
    let p = no_request!(acme, outside(Plan::get(&acme, "pro").await, "acme"));
    assert_eq!(foreign_key(&p), (Op::GetItem, "pk", "PLAN#pro"));
    no_request!(acme, outside(plan.put(&acme).await, "acme"));
    let p = no_request!(acme, outside(acme.scan::<User>().all().await, "acme"));
    assert_eq!(p, TenantProblem::Unconfined { operation: Op::Scan, index: None });
    let p = no_request!(acme, outside(acme.scan::<User>().index("gsi1").all().await, "acme"));
    assert_eq!(p, TenantProblem::Unconfined { operation: Op::Scan, index: Some("gsi1".into()) });
    let err = no_request!(acme, acme.scan::<User>().all().await.unwrap_err());
    assert!(err.is_outside_tenant() && err.is_invalid_input(), "{err}");
    assert!(err.to_string().contains("outside tenant `acme`"), "{err}");
    // The unscoped handle reads them.
    assert_eq!(Plan::get(&db, "pro").await?, Some(plan));
    assert_eq!(db.scan::<Plan>().all().await?.len(), 1);
    Ok(())
}

/// One operation of each kind, on keys of tenant `of`, through `db`; the result says only
/// whether the tenant guard refused it (any other outcome is the operation's own).
async fn refused(db: &Db<Saas>, kind: usize, of: &str) -> Result<bool, Error> {
    let user = User::new(of, "p");
    let result = match kind {
        0 => user.put(db).await.map(drop),
        1 => User::get(db, of, "p").await.map(drop),
        2 => User::update(db, of, "p").upsert().set(User::EMAIL, "e").await.map(drop),
        3 => User::delete(db, of, "p").await.map(drop),
        4 => User::query(db, of).all().await.map(drop),
        5 => User::query_gsi1(db, of).all().await.map(drop),
        6 => db.batch_write().put(&user).await,
        7 => db.batch_get([User::key(of, "p")]).await.map(drop),
        8 => db.transaction().put(&user).await.map(drop),
        9 => {
            let mut get = db.transact_get();
            get.get(User::key(of, "p"));
            get.await.map(drop)
        }
        10 => Dir::tree(db, of)
            .insert(&Dir { org: of.into(), id: "n".into(), parent: None })
            .await
            .map(drop),
        _ => Partner::edges(db).outgoing(of).all().await.map(drop),
    };
    match result {
        Err(Error::OutsideTenant { .. }) => Ok(true),
        Err(e) => Err(e),
        Ok(()) => Ok(false),
    }
}

/// Tenant ids that are prefixes of each other, hold separators, the escape character, its
/// escapes, or are empty.
fn tenant_id() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex("[ab#%:/|~23]{0,5}").expect("regex"),
        Just("a".to_owned()),
        Just("ab".to_owned()),
        Just("a#b".to_owned()),
        Just("a%23b".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// Every kind of operation through a handle scoped to `tenant`, on keys of `other`: the
    /// guard refuses it exactly when the ids differ, before sending anything, and the
    /// tenant's own operations all go through.
    #[test]
    fn the_guard_refuses_exactly_other_tenants(tenant in tenant_id(), other in tenant_id()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(async {
            let db = support::db::<Saas>().await;
            let scoped = db.clone().for_tenant(tenant.as_str());
            for kind in 0..12 {
                let before = scoped.requests();
                let refused = refused(&scoped, kind, &other).await;
                let refused = refused.unwrap_or_else(|e| panic!("kind {kind}: {e:?}"));
                assert_eq!(refused, tenant != other, "kind {kind}, {tenant:?} / {other:?}");
                if refused {
                    assert_eq!((scoped.requests() - before).total(), 0, "kind {kind}: sent");
                }
            }
            let keys = snapshot_keys(&db).await;
            if tenant != other {
                assert!(keys.is_empty(), "written: {keys:?}");
            }
        });
    }
}

/// The exported IAM policy: one statement on the table and one per index, each allowing
/// exactly the tenant's partitions (the literal and the tenant, alone or followed by a
/// separator), with the principal's tenant required and free of characters keys escape.
#[tokio::test]
async fn the_iam_policy_confines_the_table_and_each_index_to_the_tenant() {
    use ddb_model::tooling::cli::{Cli, CliError};
    use ddb_model::tooling::{PolicyTarget, TABLE_ACTIONS, TableModel};
    use serde_json::Value;

    let model = TableModel::of::<Saas>().entity::<User>().entity::<Plan>();
    let cli = Cli::new(model.clone());
    let mut out = Vec::new();
    let args = ["iam-policy", "--tenant-key", "aws:PrincipalTag/org", "--account", "123456789012"];
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    cli.run_with(&args, &mut out).await.expect("iam-policy");
    let policy: Value = serde_json::from_slice(&out).expect("JSON");
    let mut target = PolicyTarget::new("tenants");
    target.tenant_key = "aws:PrincipalTag/org".into();
    target.account = "123456789012".into();
    assert_eq!(Some(&policy), model.tenant_policy(&target).as_ref(), "the CLI prints the export");

    assert_eq!(policy["Version"], "2012-10-17");
    let statements = policy["Statement"].as_array().expect("statements");
    assert_eq!(statements.len(), 2, "the table and gsi1");
    let table_arn = "arn:aws:dynamodb:*:123456789012:table/tenants";
    let resources: Vec<&str> = statements.iter().map(|s| s["Resource"].as_str().unwrap()).collect();
    assert_eq!(resources, [table_arn.to_owned(), format!("{table_arn}/index/gsi1")]);
    let actions: Vec<&str> =
        statements[0]["Action"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(actions, TABLE_ACTIONS);
    assert!(!actions.contains(&"dynamodb:Scan"), "a scan names no leading key");
    assert_eq!(statements[1]["Action"], serde_json::json!(["dynamodb:Query"]));
    for statement in statements {
        assert_eq!(statement["Effect"], "Allow");
        let condition = &statement["Condition"];
        let leading = condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
            .as_array()
            .expect("LeadingKeys");
        let var = "ORG#${aws:PrincipalTag/org}";
        let expected: Vec<String> = std::iter::once(var.to_owned())
            .chain(["#", "/", "|", "~", ":"].map(|s| format!("{var}{s}*")))
            .collect();
        assert_eq!(leading.iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>(), expected);
        assert_eq!(condition["Null"]["aws:PrincipalTag/org"], "false");
        let refused = condition["StringNotLike"]["aws:PrincipalTag/org"].as_array().unwrap();
        for pattern in ["*#*", "*:*", "*/*", "*%*", "*${*}*"] {
            assert!(refused.iter().any(|v| v == pattern), "{pattern} in {refused:?}");
        }
    }

    // The patterns, matched as `StringLike` matches them with the principal's tenant `acme`
    // substituted, allow the keys the library writes for tenant `acme` and no other's.
    let patterns: Vec<String> =
        statements[0]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().replace("${aws:PrincipalTag/org}", "acme"))
            .collect();
    let allows = |key: &str| patterns.iter().any(|p| string_like(p, key));
    for other in ["acme", "acme2", "acm", "acme#x", "acme%23x", "acme:x", ""] {
        let user = User::new(other, "ann");
        let index_pk =
            format!("ORG#{}#EMAIL", User::key(other, "x").pk().trim_start_matches("ORG#"));
        for key in
            [user.key().pk().to_owned(), index_pk, Task::key(other, "p", "t").pk().to_owned()]
        {
            assert_eq!(allows(&key), other == "acme", "{key}");
        }
    }
    assert!(!allows("PLAN#pro"), "a global item");

    // A table without tenants has no policy; the command says so.
    #[derive(Table)]
    #[table(name = "plain")]
    struct Plain;
    assert!(TableModel::of::<Plain>().tenant_policy(&PolicyTarget::new("plain")).is_none());
    let plain = Cli::new(TableModel::of::<Plain>());
    let err = plain.run_with(&["iam-policy".to_owned()], &mut Vec::new()).await.unwrap_err();
    assert!(
        matches!(&err, CliError::Usage(m) if m.to_string().contains("has no tenants")),
        "{err}"
    );
    let wrong = ["markdown".to_owned(), "--tenant-key".to_owned(), "x".to_owned()];
    assert!(matches!(cli.run_with(&wrong, &mut Vec::new()).await, Err(CliError::Usage(_))));
}

/// IAM's `StringLike`: `*` matches any run of characters, `?` any one character.
fn string_like(pattern: &str, text: &str) -> bool {
    match pattern.chars().next() {
        None => text.is_empty(),
        Some('*') => (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .any(|i| string_like(&pattern[1..], &text[i..])),
        Some(c) => {
            let mut chars = text.chars();
            chars.next().is_some_and(|t| c == '?' || t == c)
                && string_like(&pattern[c.len_utf8()..], chars.as_str())
        }
    }
}
