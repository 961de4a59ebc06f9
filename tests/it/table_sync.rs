//! `create_table`'s settings (stream, tags, point-in-time recovery, resource policy) and
//! `sync_table`: the exact report of a table that differs from its declaration, applying it
//! (with the requests it takes), and a second sync that finds nothing. On both backends; the
//! settings an endpoint lacks (the embedded engine: point-in-time recovery and resource
//! policies; DynamoDB Local: those and tags) are the typed `Error::Unsupported`, which
//! `settings_an_endpoint_lacks_are_typed_errors` checks, and the other tests leave them out
//! there, saying so.

use std::collections::BTreeMap;

use ddb_model::error::{Capability, RequestProblem, TableMismatchReason, TagProblem};
use ddb_model::ops::{OnDemandMax, TableChange, TableDiff, TableOptions, ViewType};
use ddb_model::prelude::*;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::{Cli, CliError};
use ddb_model::{Op, local};
use proptest::prelude::*;

/// The table as first deployed: one index, no Time to Live.
#[derive(Table)]
#[table(name = "sync", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Narrow;

/// The table as declared now: a second index and Time to Live.
#[derive(Table)]
#[table(
    name = "sync",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk"),
    ttl = "expires"
)]
struct Wide;

/// `gsi1` keyed by other attributes: not something an `UpdateTable` changes.
#[derive(Table)]
#[table(name = "sync", gsi(name = "gsi1", pk = "other"))]
struct Rekeyed;

/// A table with a partition key only.
#[derive(Table)]
#[table(name = "sync", pk = "id", no_sort_key)]
struct KeyOnly;

/// DynamoDB Local rather than the embedded engine.
fn on_dynamodb_local() -> bool {
    std::env::var("DDB_ENDPOINT").is_ok_and(|e| !e.is_empty())
}

/// Whether the endpoint has tags: the embedded engine does, DynamoDB Local does not.
fn has_tags() -> bool {
    let has = !on_dynamodb_local();
    if !has {
        eprintln!("skipped: tags, which DynamoDB Local does not have");
    }
    has
}

/// Whether an index added to a live table becomes active: not always on DynamoDB Local, which
/// can leave it `CREATING` (see `.ci/run`), so that the wait ends in `Error::TableNotActive`.
fn adds_indexes() -> bool {
    let adds = !on_dynamodb_local();
    if !adds {
        eprintln!(
            "skipped: adding an index to a live table, which DynamoDB Local can leave CREATING"
        );
    }
    adds
}

/// A handle on a table that does not exist yet.
fn fresh<T: Table>() -> Result<Db<T>, Error> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = N.fetch_add(1, Ordering::Relaxed);
    let name = format!("sync-{}-{n}-{nanos:08x}", std::process::id());
    Ok(Db::with_table_name(local::client()?, name))
}

/// The table's tags, read with the SDK.
async fn tags_of<T: Table>(db: &Db<T>) -> BTreeMap<String, String> {
    let out = db.client().describe_table().table_name(db.table_name()).send().await;
    let arn = out.expect("describe").table().and_then(|t| t.table_arn()).expect("arn").to_owned();
    let out = db.client().list_tags_of_resource().resource_arn(arn).send().await;
    let out = out.expect("list tags");
    out.tags().iter().map(|t| (t.key().to_owned(), t.value().to_owned())).collect()
}

fn tags(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Turns deletion protection off and deletes the table.
async fn drop_table<T: Table>(db: &Db<T>) -> Result<(), Error> {
    db.sync_table().deletion_protection(false).apply().await?;
    db.delete_table().await
}

#[tokio::test]
async fn create_table_sets_every_option_and_reads_them_back() -> Result<(), Error> {
    let db = fresh::<Wide>()?;
    let tagged = has_tags();
    let mut options = TableOptions::default()
        .deletion_protection(true)
        .max_on_demand(OnDemandMax::new(100, 50))
        .stream(ViewType::NewAndOldImages);
    if tagged {
        options = options.tag("team", "orders").tag("env", "test");
    }
    db.create_table().options(options.clone()).await?;
    let spent = db.requests();
    // Stream and tags ride on `CreateTable` (the tags asked back once); Time to Live is one
    // more request.
    assert_eq!(spent.get(Op::CreateTable), 1);
    assert_eq!(spent.get(Op::DescribeTimeToLive), 1);
    assert_eq!(spent.get(Op::UpdateTimeToLive), 1);
    assert_eq!(spent.get(Op::ListTagsOfResource), u64::from(tagged));
    assert_eq!(spent.get(Op::TagResource) + spent.get(Op::UpdateTable), 0);

    let out = db.client().describe_table().table_name(db.table_name()).send().await;
    let out = out.expect("describe");
    let table = out.table().expect("a table");
    assert_eq!(table.deletion_protection_enabled(), Some(true));
    let stream = table.stream_specification().expect("a stream");
    assert!(stream.stream_enabled());
    assert_eq!(stream.stream_view_type().map(|v| v.as_str()), Some("NEW_AND_OLD_IMAGES"));
    if tagged {
        assert_eq!(tags_of(&db).await, tags(&[("env", "test"), ("team", "orders")]));
    }

    // The same options, compared: nothing to do, in a describe of each kind.
    db.reset_requests();
    let diff = db.sync_table().options(options).await?;
    assert!(diff.is_empty(), "{diff}");
    assert_eq!(diff.to_string(), format!("table `{}` is as declared\n", db.table_name()));
    let spent = db.requests();
    assert_eq!(
        (spent.get(Op::DescribeTable), spent.get(Op::DescribeTimeToLive)),
        (1, 1),
        "one describe of each"
    );
    let tag_reads = u64::from(tagged);
    assert_eq!((spent.get(Op::ListTagsOfResource), spent.total()), (tag_reads, 2 + tag_reads));
    drop_table(&db).await
}

#[tokio::test]
async fn a_table_missing_an_index_ttl_and_settings_is_reported_then_applied() -> Result<(), Error> {
    if !adds_indexes() {
        return Ok(());
    }
    let tagged = has_tags();
    let old = fresh::<Narrow>()?;
    let mut options = TableOptions::default().deletion_protection(true).stream(ViewType::NewImage);
    if tagged {
        old.create_table().tag("old", "x").tag("team", "billing").await?;
        options = options.tag("team", "orders").tag("cost-center", "42");
    } else {
        old.create_table().await?;
    }
    let db: Db<Wide> = Db::with_table_name(old.client().clone(), old.table_name());

    let diff = db.sync_table().options(options.clone()).await?;
    let text = |s: &str| s.to_owned();
    let mut expected = vec![
        TableChange::CreateIndex { index: text("gsi2") },
        TableChange::EnableTtl { attribute: text("expires") },
        TableChange::DeletionProtection { enabled: true },
        TableChange::Stream { found: None, declared: Some(ViewType::NewImage) },
    ];
    if tagged {
        expected.extend([
            TableChange::Tag { key: text("cost-center"), found: None, declared: Some(text("42")) },
            TableChange::Tag {
                key: text("team"),
                found: Some(text("billing")),
                declared: Some(text("orders")),
            },
            TableChange::Tag { key: text("old"), found: Some(text("x")), declared: None },
        ]);
    }
    assert_eq!(diff.changes, expected);
    // 3 `UpdateTable`s, 1 `UpdateTimeToLive` (1 `TagResource`, 1 `UntagResource`).
    let t = u64::from(tagged);
    assert_eq!(diff.requests() as u64, 4 + 2 * t);
    let printed = diff.to_string();
    for line in ["create index", "gsi2", "UpdateTable", "stream", "off -> NEW_IMAGE"] {
        assert!(printed.contains(line), "{line}: {printed}");
    }
    let count = format!("{} differences", expected.len());
    assert!(printed.contains(&count), "{printed}");
    if tagged {
        assert!(printed.contains("team: billing -> orders"), "{printed}");
    }
    let json = serde_json::to_string(&diff).expect("serializes");
    assert!(json.contains(r#""change":"create_index""#), "{json}");
    assert_eq!(serde_json::from_str::<TableDiff>(&json).expect("deserializes"), diff);

    db.reset_requests();
    let applied = db.sync_table().options(options.clone()).apply().await?;
    assert_eq!(applied, diff);
    let spent = db.requests();
    let counts: Vec<u64> = [
        Op::UpdateTable,
        Op::UpdateTimeToLive,
        Op::TagResource,
        Op::UntagResource,
        Op::DescribeTimeToLive,
        Op::ListTagsOfResource,
    ]
    .iter()
    .map(|op| spent.get(*op))
    .collect();
    assert_eq!(counts, [3, 1, t, t, 1, t]);
    // One describe to compare, then at least one poll after each `UpdateTable`.
    assert!(spent.get(Op::DescribeTable) >= 4, "{:?}", spent.get(Op::DescribeTable));

    // The table is now as declared: a second sync finds nothing and sends no change.
    db.reset_requests();
    let again = db.sync_table().options(options).await?;
    assert!(again.is_empty(), "{again}");
    assert_eq!(
        db.requests().total(),
        2 + t,
        "DescribeTable, DescribeTimeToLive (ListTagsOfResource)"
    );
    if tagged {
        assert_eq!(tags_of(&db).await, tags(&[("cost-center", "42"), ("team", "orders")]));
    }
    // And `create_table` agrees with it.
    db.create_table().await?;
    drop_table(&db).await
}

#[tokio::test]
async fn an_undeclared_index_is_reported_and_kept_unless_asked() -> Result<(), Error> {
    let wide = fresh::<Wide>()?;
    wide.create_table().await?;
    let db: Db<Narrow> = Db::with_table_name(wide.client().clone(), wide.table_name());
    let undeclared = TableChange::UndeclaredIndex { index: "gsi2".into(), vector: false };
    let diff = db.sync_table().await?;
    assert_eq!(diff.changes, vec![undeclared.clone()]);
    assert_eq!(diff.requests(), 0);
    // Applying it changes nothing.
    db.reset_requests();
    db.sync_table().apply().await?;
    assert_eq!(db.requests().get(Op::UpdateTable), 0);
    assert_eq!(db.sync_table().await?.changes, vec![undeclared]);

    if !adds_indexes() {
        // (Nor does it always finish deleting one.)
        return wide.delete_table().await;
    }
    // Asked, the sync deletes it (one `UpdateTable`), and then finds nothing.
    let delete = db.sync_table().delete_undeclared_indexes(true);
    let applied = delete.apply().await?;
    assert_eq!(applied.changes, vec![TableChange::DeleteIndex { index: "gsi2".into() }]);
    assert_eq!(db.requests().get(Op::UpdateTable), 1);
    assert!(db.sync_table().await?.is_empty());
    // `Wide` now misses it, and its sync creates it again.
    assert_eq!(
        wide.sync_table().apply().await?.changes,
        vec![TableChange::CreateIndex { index: "gsi2".into() }]
    );
    assert!(wide.sync_table().await?.is_empty());
    wide.delete_table().await
}

#[tokio::test]
async fn key_schema_differences_are_reported_and_never_applied() -> Result<(), Error> {
    let narrow = fresh::<Narrow>()?;
    narrow.create_table().await?;
    let pair = |a: &str, b: Option<&str>| {
        let mut v = vec![(a.to_owned(), true)];
        v.extend(b.map(|b| (b.to_owned(), false)));
        v
    };

    let rekeyed: Db<Rekeyed> = Db::with_table_name(narrow.client().clone(), narrow.table_name());
    let diff = rekeyed.sync_table().stream(ViewType::KeysOnly).await?;
    let mismatch = TableMismatchReason::KeySchema {
        index: Some("gsi1".into()),
        found: pair("gsi1pk", Some("gsi1sk")),
        declared: pair("other", None),
    };
    // The difference that cannot be applied comes first; the stream is still reported.
    assert_eq!(diff.changes[0], TableChange::Mismatch { reason: mismatch.clone() });
    assert_eq!(diff.unfixable().collect::<Vec<_>>(), vec![&mismatch]);
    assert!(diff.to_string().contains("cannot be applied"), "{diff}");
    assert!(matches!(diff.changes[1], TableChange::Stream { .. }), "{diff}");

    // Applying is refused before any change is sent.
    rekeyed.reset_requests();
    let err = rekeyed.sync_table().stream(ViewType::KeysOnly).apply().await.unwrap_err();
    assert!(matches!(&err, Error::TableMismatch { reason, .. } if *reason == mismatch), "{err:?}");
    let spent = rekeyed.requests();
    assert_eq!(spent.total(), spent.get(Op::DescribeTable), "only the describe was sent");

    // The table's own key schema.
    let key_only: Db<KeyOnly> = Db::with_table_name(narrow.client().clone(), narrow.table_name());
    let diff = key_only.sync_table().await?;
    let reason = TableMismatchReason::KeySchema {
        index: None,
        found: pair("pk", Some("sk")),
        declared: pair("id", None),
    };
    assert_eq!(diff.changes[0], TableChange::Mismatch { reason });
    narrow.delete_table().await
}

#[tokio::test]
async fn invalid_settings_are_refused_before_sending() -> Result<(), Error> {
    let db = fresh::<Narrow>()?;
    let tag_problem = |err: Error| match err {
        Error::InvalidRequest { problem: RequestProblem::Tag { problem, .. }, .. } => problem,
        other => panic!("not a tag problem: {other:?}"),
    };
    let long = "k".repeat(129);
    let err = db.create_table().tag(long.as_str(), "v").await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::KeyLength { chars: 129, max: 128 });
    let err = db.create_table().tag("", "v").await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::KeyLength { chars: 0, max: 128 });
    let err = db.create_table().tag("k", "é".repeat(257)).await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::ValueLength { chars: 257, max: 256 });
    // 256 characters of two bytes each are fine: the limit counts characters.
    assert!(TableOptions::default().tag("k", "é".repeat(256)).validate::<Narrow>().is_ok());
    let err = db.create_table().tag("AWS:cost", "v").await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::ReservedPrefix);
    let err = db.sync_table().tag("team", "a;b").await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::Character { character: ';' });
    let mut many = TableOptions::default();
    for i in 0..51 {
        many = many.tag(format!("k{i:02}"), "v");
    }
    let err = db.create_table().options(many).await.unwrap_err();
    assert_eq!(tag_problem(err), TagProblem::TooMany { count: 51, max: 50 });

    let big = format!(r#"{{"Version":"2012-10-17","Pad":"{}"}}"#, " ".repeat(20 * 1024));
    let err = db.create_table().resource_policy(big.clone()).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidRequest { path, problem: RequestProblem::PolicyTooLarge { bytes, max: 20480 } }
            if path == "ResourcePolicy" && *bytes == big.len()),
        "{err:?}"
    );
    let err = db.sync_table().resource_policy("{not json").apply().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest { problem: RequestProblem::PolicyNotJson { line: 1, .. }, .. }
        ),
        "{err:?}"
    );
    assert_eq!(db.requests().total(), 0, "nothing sent");
    Ok(())
}

/// A resource policy that allows the account's root to read the table.
fn policy(arn: &str) -> String {
    let account = arn.split(':').nth(4).unwrap_or("000000000000");
    format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":{{"AWS":"arn:aws:iam::{account}:root"}},"Action":"dynamodb:GetItem","Resource":"{arn}"}}]}}"#
    )
}

#[tokio::test]
async fn settings_an_endpoint_lacks_are_typed_errors() -> Result<(), Error> {
    let db = fresh::<Narrow>()?;
    db.create_table().await?;
    let unsupported = |err: &Error, capability: Capability, operation: Op| {
        matches!(err, Error::Unsupported { capability: c, operation: o, source: Some(_) }
            if *c == capability && *o == operation)
    };

    // Point-in-time recovery: neither backend has it (the positive path needs DynamoDB).
    let err = db.sync_table().point_in_time_recovery(true).apply().await.unwrap_err();
    let operation = Op::DescribeContinuousBackups;
    assert!(unsupported(&err, Capability::PointInTimeRecovery, operation), "{err:?}");
    assert!(err.is_unsupported() && !err.is_vector_search_unsupported());
    eprintln!("skipped: point-in-time recovery on this endpoint ({err})");
    // Created with it, the table is created, then the `UpdateContinuousBackups` fails.
    let with_pitr = fresh::<Narrow>()?;
    let err = with_pitr.create_table().point_in_time_recovery(true).await.unwrap_err();
    assert!(unsupported(&err, Capability::PointInTimeRecovery, Op::UpdateContinuousBackups));
    with_pitr.delete_table().await?;

    // Resource policies: neither backend has them; both say so.
    let arn = db.client().describe_table().table_name(db.table_name()).send().await;
    let arn = arn.expect("describe").table().and_then(|t| t.table_arn()).unwrap_or("").to_owned();
    let err = db.sync_table().resource_policy(policy(&arn)).await.unwrap_err();
    assert!(unsupported(&err, Capability::ResourcePolicy, Op::GetResourcePolicy), "{err:?}");
    assert!(err.to_string().contains("resource policies"), "{err}");
    eprintln!("skipped: resource policies on this endpoint ({err})");

    // Tags: DynamoDB Local takes them in `CreateTable` and drops them; asked back, it says it
    // has none, and so does a sync.
    if on_dynamodb_local() {
        let with_tags = fresh::<Narrow>()?;
        let err = with_tags.create_table().tag("team", "orders").await.unwrap_err();
        assert!(unsupported(&err, Capability::Tags, Op::ListTagsOfResource), "{err:?}");
        let err = with_tags.sync_table().tag("team", "orders").await.unwrap_err();
        assert!(unsupported(&err, Capability::Tags, Op::ListTagsOfResource), "{err:?}");
        with_tags.delete_table().await?;
    }

    // Created with a policy, the table is checked for it rather than trusted.
    let with_policy = fresh::<Narrow>()?;
    let err = with_policy.create_table().resource_policy(policy(&arn)).await.unwrap_err();
    assert!(unsupported(&err, Capability::ResourcePolicy, Op::GetResourcePolicy), "{err:?}");
    with_policy.delete_table().await?;
    db.delete_table().await
}

#[tokio::test]
async fn the_tool_reports_and_applies_the_sync() -> Result<(), CliError> {
    if !adds_indexes() {
        return Ok(());
    }
    let old = fresh::<Narrow>()?;
    old.create_table().await?;
    let endpoint = local::endpoint()?;
    let mut options = TableOptions::default().stream(ViewType::NewAndOldImages);
    if has_tags() {
        options = options.tag("team", "orders");
    }
    let expected = 3 + options.tags.as_ref().map_or(0, |t| t.len());
    let cli = Cli::new(TableModel::of::<Wide>()).table_options(options);
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["sync", "--endpoint", &endpoint, "--table", old.table_name()];
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_owned).collect()
    };

    let mut out = Vec::new();
    cli.run_with(&args(&["--json"]), &mut out).await?;
    let diff: TableDiff = serde_json::from_slice(&out).expect("a report");
    assert_eq!(diff.changes.len(), expected, "{diff}"); // gsi2, Time to Live, the stream (the tag)

    let mut out = Vec::new();
    cli.run_with(&args(&[]), &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), diff.to_string());

    let mut out = Vec::new();
    cli.run_with(&args(&["--apply"]), &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), format!("{diff}applied\n"));

    let mut out = Vec::new();
    cli.run_with(&args(&[]), &mut out).await?;
    let clean = format!("table `{}` is as declared\n", old.table_name());
    assert_eq!(String::from_utf8_lossy(&out), clean);

    // Deleting undeclared indexes is only meaningful with --apply.
    let err = cli.run_with(&args(&["--delete-undeclared-indexes"]), &mut Vec::new()).await;
    assert!(matches!(err, Err(CliError::Usage(_))), "{err:?}");
    old.delete_table().await?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Whatever tags a table has and whatever are declared, the sync reports exactly the
    /// differences of the two maps, and after applying them the table has the declared tags
    /// and a second sync finds nothing.
    #[test]
    fn tags_converge_to_the_declaration(
        live in prop::collection::btree_map("[a-d]", "[xy]{0,2}", 0..4),
        declared in prop::collection::btree_map("[a-d]", "[xy]{0,2}", 0..4),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        if !has_tags() {
            return Ok(());
        }
        runtime.block_on(async {
            let db = fresh::<Narrow>().expect("client");
            let initial = TableOptions { tags: Some(live.clone()), ..TableOptions::default() };
            db.create_table().options(initial).await.expect("create");
            let options = TableOptions { tags: Some(declared.clone()), ..TableOptions::default() };
            let diff = db.sync_table().options(options.clone()).apply().await.expect("sync");
            // The model: every key of either map whose values differ.
            let keys: std::collections::BTreeSet<&String> = live.keys().chain(declared.keys()).collect();
            let expected = keys.into_iter().filter(|k| live.get(*k) != declared.get(*k)).count();
            prop_assert_eq!(diff.changes.len(), expected);
            prop_assert_eq!(tags_of(&db).await, declared.clone());
            prop_assert!(db.sync_table().options(options).await.expect("again").is_empty());
            db.delete_table().await.expect("delete");
            Ok(())
        })?;
    }
}
