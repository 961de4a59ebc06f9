//! The marked `UpdateItem` of a non-idempotent update that returns its result: marker
//! attributes make it safe to send again, a retry that finds them rebuilds the state the
//! update produced, and a second request removes them (see [`Update`]'s documentation).

use std::time::Duration;

use aws_sdk_dynamodb::types::ReturnValue;

use super::Update;
use super::place::place;
use super::send::no_attributes;
use crate::db::Db;
use crate::error::Error;
use crate::expr::{ExprBuilder, Marked, Node};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, MARKER_PREFIX, Table, from_item};
use crate::ops::action::Action;
use crate::ops::{Rendered, idempotency_token, key_item, retry};
use crate::stats::Op;

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// A non-idempotent update that returns its result: one `UpdateItem` with
    /// `ReturnValues=ALL_NEW`, made safe to send again by marker attributes (see the type's
    /// documentation), then a second `UpdateItem` that removes the markers.
    pub(super) async fn execute_marked(&self, held: Option<&Node>) -> Result<E, Error> {
        let db = self.db;
        let (write, marked) = self.rendered(held, |actions, b| {
            actions.render_marked(b, E::VERSION.map(|v| v.attr), &marker_base())
        })?;
        let Rendered { key, guard, condition, names, values } = write;
        let condition = format!("attribute_not_exists({}) AND ({condition})", marked.detect);
        let request = Action::update(key_item(&key), marked.expression.clone())
            .with_expressions(condition, names, values)
            .return_old(true)
            .update_item(db)?
            .return_values(ReturnValue::AllNew)
            .set_return_consumed_capacity(self.db.capacity_mode());
        let result = retry::send_retrying(db, Op::UpdateItem, || Ok(request.clone())).await;
        let produced = match result {
            Ok(out) => out.attributes.ok_or_else(|| no_attributes::<E>(&key))?,
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => match e.item {
                    // Our marker is stored: an earlier attempt of this update was applied (its
                    // response was lost). Its result: the item as stored now, with every path
                    // this update wrote set to the value it wrote.
                    Some(item) if marked.markers.first().is_some_and(|m| item.contains_key(m)) => {
                        produced_state(item, &marked)
                    }
                    current => return Err(guard.failure(&key, current)),
                },
                other => return Err(Error::service(Op::UpdateItem, other)),
            },
        };
        remove_markers(db, &key, &marked.markers, &produced).await;
        from_item(produced)
    }
}

/// Markers older than this are left over from an update whose marker removal failed; every
/// retry of that update ended long ago (the library's retries of one update take seconds), so
/// a later update of the item removes them.
const STALE_MARKER: Duration = Duration::from_secs(15 * 60);
/// The most leftover markers one marker removal also removes.
const MAX_STALE_REMOVED: usize = 32;

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A fresh marker name: the prefix, the time in milliseconds (hex), a random token.
fn marker_base() -> String {
    let token = idempotency_token();
    let random = token.get(..16).unwrap_or(&token);
    format!("{MARKER_PREFIX}{:x}.{random}", now_millis())
}

/// True when marker attribute `name` was made more than [`STALE_MARKER`] ago.
fn is_stale_marker(name: &str, now: u64) -> bool {
    let Some(rest) = name.strip_prefix(MARKER_PREFIX) else { return false };
    let Some(Ok(made)) = rest.split('.').next().map(|t| u64::from_str_radix(t, 16)) else {
        return false;
    };
    let stale = u64::try_from(STALE_MARKER.as_millis()).unwrap_or(u64::MAX);
    now.saturating_sub(made) > stale
}

/// The state an applied update produced, from the item stored when its retry found its
/// marker: each computed path set to the value its marker holds, each set path to the value
/// set, each removed path removed.
fn produced_state(mut item: Item, marked: &Marked) -> Item {
    for (path, marker) in &marked.computed {
        if let Some(value) = item.get(marker).cloned() {
            place(&mut item, path.segments(), Some(value));
        }
    }
    for (path, value) in &marked.plain {
        place(&mut item, path.segments(), Some(value.clone()));
    }
    for path in &marked.removed {
        place(&mut item, path.segments(), None);
    }
    item
}

/// Removes the markers of an applied update (and stale leftovers of others seen in
/// `produced`). Best effort: a failure leaves the markers, which reads never show to entities
/// and which a later returning update of the item removes once they are stale.
async fn remove_markers<E: Entity>(
    db: &Db<E::Table>,
    key: &Key<E>,
    markers: &[String],
    produced: &Item,
) {
    let now = now_millis();
    let stale = produced
        .keys()
        .filter(|k| !markers.contains(k) && is_stale_marker(k, now))
        .take(MAX_STALE_REMOVED);
    let mut b = ExprBuilder::default();
    let removed: Vec<String> = markers.iter().chain(stale).map(|m| b.name(m)).collect();
    let pk = b.name(<E::Table as Table>::PK);
    // Never creates the item again if it was deleted meanwhile.
    let request = Action::update(key_item(key), format!("REMOVE {}", removed.join(", ")))
        .guarded(format!("attribute_exists({pk})"), b)
        .update_item(db);
    // The update itself passed the guard, and its key is this one's.
    let Ok(request) = request else { return };
    let request = request.set_return_consumed_capacity(db.capacity_mode());
    // REMOVE is idempotent: safe to send again.
    // A marker left behind costs nothing but its bytes: a failure here is not the update's.
    let _ = retry::send_retrying(db, Op::UpdateItem, || Ok(request.clone())).await;
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::expr::{Attr, Path, UpdatePath};

    struct T;
    const ADDRESS: Attr<T, std::collections::BTreeMap<String, String>> = Attr::new("address");
    const LIST: Attr<T, Vec<i64>> = Attr::new("list");

    fn n(v: i64) -> AttributeValue {
        AttributeValue::N(v.to_string())
    }

    #[test]
    fn markers_are_stale_after_fifteen_minutes() {
        let now = now_millis();
        let base = marker_base();
        assert!(base.starts_with(MARKER_PREFIX));
        assert!(!is_stale_marker(&format!("{base}.0"), now));
        assert!(is_stale_marker(&format!("{base}.0"), now + 16 * 60 * 1000));
        assert!(!is_stale_marker("_ddbm.zz.0", now), "not a time");
        assert!(!is_stale_marker("other", now));
    }

    #[test]
    fn the_produced_state_overlays_what_the_update_wrote() {
        let mut item = Item::new();
        item.insert("n".into(), n(7)); // a later add made it 7
        item.insert("_ddbm.1.a.0".into(), n(5)); // this update produced 5
        item.insert("name".into(), AttributeValue::S("later".into()));
        item.insert("nick".into(), AttributeValue::S("x".into()));
        let mut inner = std::collections::HashMap::new();
        inner.insert("city".to_string(), AttributeValue::S("Paris".into()));
        item.insert("address".into(), AttributeValue::M(inner));
        item.insert("list".into(), AttributeValue::L(vec![n(1), n(2)]));
        let marked = Marked {
            expression: String::new(),
            detect: String::new(),
            markers: vec!["_ddbm.1.a.0".into()],
            computed: vec![(Path::attr("n"), "_ddbm.1.a.0".into())],
            plain: vec![
                (Path::attr("name"), AttributeValue::S("mine".into())),
                (
                    UpdatePath::<T, String>::update_path(&ADDRESS.at::<String>("city")),
                    AttributeValue::S("Lyon".into()),
                ),
                (UpdatePath::<T, i64>::update_path(&LIST.index::<i64>(1)), n(9)),
            ],
            removed: vec![Path::attr("nick")],
        };
        let out = produced_state(item, &marked);
        assert_eq!(out["n"], n(5));
        assert_eq!(out["name"], AttributeValue::S("mine".into()));
        assert!(!out.contains_key("nick"));
        let AttributeValue::M(address) = &out["address"] else { panic!("a map") };
        assert_eq!(address["city"], AttributeValue::S("Lyon".into()));
        assert_eq!(out["list"], AttributeValue::L(vec![n(1), n(9)]));
    }
}
