//! Public paths of the types the architecture work moved (errors to the bottom of the module
//! graph, the model layer): every old path still names the same item. A re-export dropped by a
//! later move fails to compile here; a type duplicated instead of re-exported fails the
//! assertions.

use std::any::TypeId;

fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

#[test]
fn problem_types_keep_their_paths() {
    use ddb_model as d;
    assert!(same::<d::KeyProblem, d::prelude::KeyProblem>());
    assert!(same::<d::TransportKind, d::prelude::TransportKind>());
    assert!(same::<d::RequestProblem, d::expr::RequestProblem>());
    assert!(same::<d::TransactionProblem, d::ops::TransactionProblem>());
    assert!(same::<d::ActionReason, d::ops::ActionReason>());
    assert!(same::<d::CancelReason, d::ops::CancelReason>());
    assert!(same::<d::BatchKey, d::ops::BatchKey>());
    assert!(same::<d::BatchAction, d::ops::BatchAction>());
    assert!(same::<d::UnprocessedWrite, d::ops::UnprocessedWrite>());
    assert!(same::<d::tree::TreeProblem, d::prelude::TreeProblem>());
    assert!(same::<d::tree::PathProblem, d::prelude::PathProblem>());
    assert!(same::<d::TreePath, d::tree::TreePath>());
    let _: [(d::tree::TreeOp, d::tree::OpKind, d::tree::OpPhase); 0] = [];
    assert_eq!((d::tree::MAX_PATH_DEPTH, d::tree::PATH_SEPARATOR), (128, '/'));
}

#[test]
fn model_items_keep_their_paths() {
    use d::Table as _;
    use ddb_model as d;
    let gsi1: Option<d::IndexDef> = d::DefaultTable::INDEXES.first().copied();
    assert_eq!(gsi1.map(|i| i.name), Some("gsi1"));
    assert!(same::<d::VersionDef, d::entity::VersionDef>());
    fn entity_paths<E: d::Entity + d::entity::Entity>() {
        let _: fn(&E, Option<u64>) -> Result<d::Item, d::Error> = d::entity::to_item::<E>;
        let _: fn(d::Item) -> Result<E, d::Error> = d::entity::from_item::<E>;
        let _: fn(&d::Key<E>) -> Result<(), d::Error> = d::Key::<E>::validate;
        let _: fn(&d::Error) -> Option<Result<E, d::Error>> = d::Error::current::<E>;
        let _: fn(&d::BatchKey) -> Option<d::Key<E>> = d::BatchKey::key::<E>;
    }
    let _ = entity_paths::<crate::model::User>;
    fn version_field<V: d::VersionField + d::entity::VersionField>() {}
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
