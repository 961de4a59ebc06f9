//! Public paths of the types the architecture work moved (errors to the bottom of the module
//! graph, the model layer, the root narrowed to what users name): every path a type is
//! documented at names the same item. A re-export dropped by a later move fails to compile
//! here; a type duplicated instead of re-exported fails the assertions.

use std::any::TypeId;

fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

#[test]
fn problem_types_keep_their_paths() {
    use ddb_model as d;
    assert!(same::<d::error::KeyProblem, d::prelude::KeyProblem>());
    assert!(same::<d::error::TransportKind, d::prelude::TransportKind>());
    assert!(same::<d::error::RequestProblem, d::expr::RequestProblem>());
    assert!(same::<d::error::TransactionProblem, d::ops::TransactionProblem>());
    assert!(same::<d::error::ActionReason, d::ops::ActionReason>());
    assert!(same::<d::error::CancelReason, d::ops::CancelReason>());
    assert!(same::<d::error::BatchKey, d::ops::BatchKey>());
    assert!(same::<d::error::BatchAction, d::ops::BatchAction>());
    assert!(same::<d::error::UnprocessedWrite, d::ops::UnprocessedWrite>());
    assert!(same::<d::tree::TreeProblem, d::prelude::TreeProblem>());
    assert!(same::<d::error::TreeProblem, d::prelude::TreeProblem>());
    assert!(same::<d::tree::PathProblem, d::prelude::PathProblem>());
    assert!(same::<d::TreePath, d::tree::TreePath>());
    assert!(same::<d::error::UpgradeError, Box<dyn std::error::Error + Send + Sync>>());
    let _: [(d::tree::TreeOp, d::tree::OpKind, d::tree::OpPhase); 0] = [];
    assert_eq!((d::tree::MAX_PATH_DEPTH, d::tree::PATH_SEPARATOR), (128, '/'));
}

#[test]
fn model_items_keep_their_paths() {
    use d::Table as _;
    use ddb_model as d;
    let gsi1: Option<d::entity::IndexDef> = d::DefaultTable::INDEXES.first().copied();
    assert_eq!(gsi1.map(|i| i.name), Some("gsi1"));
    let _: Option<(d::entity::VersionDef, d::entity::Metric, d::entity::TypeTag)> = None;
    assert!(same::<d::DefaultTable, d::entity::DefaultTable>());
    fn entity_paths<E: d::Entity + d::entity::Entity>() {
        let _: fn(&E, Option<u64>) -> Result<d::Item, d::Error> = d::entity::to_item::<E>;
        let _: fn(d::Item) -> Result<E, d::Error> = d::entity::from_item::<E>;
        let _: fn(&d::Key<E>) -> Result<(), d::Error> = d::Key::<E>::validate;
        let _: fn(&d::Error) -> Option<Result<E, d::Error>> = d::Error::current::<E>;
        let _: fn(&d::error::BatchKey) -> Option<d::Key<E>> = d::error::BatchKey::key::<E>;
    }
    let _ = entity_paths::<crate::model::User>;
    fn version_field<V: d::entity::VersionField>() {}
    version_field::<u64>();
}

#[test]
fn key_escaping_keeps_its_paths() {
    let mut out = String::new();
    ddb_model::key::escape_into("a#b", &mut out);
    assert_eq!(out, "a%23b");
    assert_eq!(ddb_model::key::unescape(&out).as_deref(), Ok("a#b"));
    assert!(ddb_model::key::is_separator('#') && ddb_model::key::SEPARATORS.contains(&'/'));
    assert_eq!(ddb_model::key::ESCAPE, '%');
    let _: Option<ddb_model::key::UnescapeError> = None;
}

#[test]
fn request_accounting_and_table_options_keep_their_paths() {
    use ddb_model as d;
    assert!(same::<d::Op, d::stats::Op>());
    assert!(same::<d::RequestStats, d::stats::RequestStats>());
    let _: [(d::stats::Stats, d::stats::OpStats, d::stats::TargetStats); 0] = [];
    let _: [(d::ops::OnDemandMax, d::ops::TableOptions, d::ops::WarmThroughput); 0] = [];
    let _: Option<(
        d::key::KeyPartError,
        d::expr::AttrType,
        d::ops::Nearest<'_, crate::model::User>,
    )> = None;
}

/// Every name the narrowed root dropped (issue 26) is reachable at the module path the
/// CHANGELOG gives for it.
#[test]
#[allow(unused_imports)]
fn names_off_the_root_are_at_their_module_paths() {
    use ddb_model::entity::{
        AttrKind, Expiry, ExpiryField, Identity, IndexAttribute, IndexDef, KeyAttr,
        MAX_EXPIRY_SECS, MAX_VECTOR_DIMS, Metric, SchemaDef, TimestampField, TimestampsDef,
        TypeTag, UNVERSIONED, UniqueDef, UniqueField, UpgradeFn, VectorField, VectorIndexDef,
        VersionDef, VersionField,
    };
    use ddb_model::error::{
        ActionReason, BatchAction, BatchKey, CancelReason, InternalProblem, KeyProblem,
        RequestProblem, RetryAdvice, Throttle, ThrottleLimit, ThrottledAccess, TransactionProblem,
        TransportKind, UnprocessedWrite, UpgradeError, VectorProblem,
    };
    use ddb_model::expr::{AttrPath, AttrType, Path};
    use ddb_model::key::{KeyArg, KeyPartError};
    use ddb_model::ops::{
        MAX_TOP_K, Nearest, OnDemandMax, OnIndex, OnTable, TableOptions, WarmThroughput,
    };
    use ddb_model::stats::{OpStats, Stats, TargetStats};
    use ddb_model::tree::{
        AdjacencyTree, ClosureTree, Hierarchy, IdHierarchy, NestedTree, PathTree, TreeProtocol,
    };
    assert_eq!((MAX_TOP_K, UNVERSIONED), (100, 1));
}
