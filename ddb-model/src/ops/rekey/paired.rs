//! The write path of a re-keyed entity mid-way ([`RekeyPhase`]): a single-item write goes to
//! the copy the phase reads (guarded as usual) and, in `WriteBoth` and `ReadNew`, to the
//! other copy in the same transaction, so both stay in step; reads by key go to the copy the
//! phase reads, and queries and scans keep the copy the phase reads.

use crate::db::Db;
use crate::error::{Error, RekeyProblem, RequestProblem};
use crate::expr::ExprBuilder;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, RekeyCopies, RekeyPhase, Table, rekey_copies};
use crate::ops::action::{Action, Kind};
use crate::ops::retry::REREAD_CONFLICTS;
use crate::ops::transact::ActionInfo;
use crate::ops::write::{self, Failed, Write};
use crate::ops::{Guard, WriteKind, key_item};

/// The key a read of `key` (in `E`'s layout) uses on `db`: its old-layout key in the phases
/// that read the old copies, `None` (the key itself) otherwise and for every entity that
/// declares no `rekey`.
pub(crate) fn phase_key<E: Entity>(
    db: &Db<E::Table>,
    key: &Key<E>,
) -> Result<Option<Key<E>>, Error> {
    if E::REKEY.is_none() {
        return Ok(None);
    }
    match db.rekey_phase::<E>() {
        RekeyPhase::Old | RekeyPhase::WriteBoth => E::rekey_key(key, true),
        RekeyPhase::ReadNew | RekeyPhase::New => Ok(None),
    }
}

/// Refuses `operation` on entity `E` through `db` in the phases `refused` (an operation that
/// cannot keep both copies in step, or would read the other copy): nothing for an entity
/// that declares no `rekey`.
pub(crate) fn refuse_in<E: Entity, T: Table>(
    db: &Db<T>,
    operation: &'static str,
    refused: &[RekeyPhase],
) -> Result<(), Error> {
    match E::REKEY {
        Some(_) => refuse_named(db, E::NAME, operation, refused),
        None => Ok(()),
    }
}

/// [`refuse_in`] for the re-keyed entity named `entity`.
pub(crate) fn refuse_named<T: Table>(
    db: &Db<T>,
    entity: &'static str,
    operation: &'static str,
    refused: &[RekeyPhase],
) -> Result<(), Error> {
    let phase = db.rekey_phase_named(entity);
    if refused.contains(&phase) {
        return Err(Error::Rekey {
            entity,
            problem: RekeyProblem::Unsupported { operation, phase },
        });
    }
    Ok(())
}

/// The test an item of a re-keyed entity passes when it is the copy a read through `db`
/// returns: the old copy in the phases that read the old copies, the new one after. Queries
/// of an index and scans find both copies of an item between its copy and the cleanup (both
/// hold the index keys); this keeps one.
pub(crate) fn read_copy<T: Table>(db: &Db<T>, copies: RekeyCopies) -> fn(&Item) -> bool {
    if READS_OLD.contains(&db.rekey_phase_named(copies.entity)) {
        copies.is_old
    } else {
        copies.is_new
    }
}

/// [`read_copy`] of `E` on `db`, `None` for an entity that declares no `rekey`.
pub(crate) fn read_copy_of<E: Entity, T: Table>(db: &Db<T>) -> Option<fn(&Item) -> bool> {
    rekey_copies::<E>().map(|copies| read_copy(db, copies))
}

/// The phases that write both copies, or the old one alone: every write of the entity goes
/// through [`run_paired`].
pub(crate) const PAIRED: &[RekeyPhase] =
    &[RekeyPhase::Old, RekeyPhase::WriteBoth, RekeyPhase::ReadNew];

/// The phases that read the old copies.
pub(crate) const READS_OLD: &[RekeyPhase] = &[RekeyPhase::Old, RekeyPhase::WriteBoth];

/// Sends `w` as its phase says: one transaction of the write on the copy the phase reads
/// and, while both copies are kept, the same write on the other copy. The other copy's
/// update is conditioned on that copy existing; when it does not (not copied yet), the
/// transaction checks instead that it still does not, so a copy made meanwhile is never
/// left stale. A write that returns an item reads it first (the transaction returns none).
pub(crate) async fn run_paired<E: Entity, W: Write<E>>(
    mut w: W,
    want: bool,
) -> Result<W::Out, Error> {
    let key = w.key()?;
    let Some(old) = E::rekey_key(&key, true)? else {
        return w.send_alone(None, want).await;
    };
    let (read_key, other) = match w.db().rekey_phase::<E>() {
        RekeyPhase::Old => (old, None),
        RekeyPhase::WriteBoth => (old, Some(key)),
        RekeyPhase::ReadNew => (key, Some(old)),
        RekeyPhase::New if W::DELETES => (key, Some(old)),
        RekeyPhase::New => return w.send_alone(None, want).await,
    };
    let mut other_exists = true;
    let mut attempt = 1;
    loop {
        let stored = if want { write::read(w.db(), &read_key).await? } else { None };
        if want
            && stored.is_none()
            && let Some(answer) = w.absent()
        {
            return answer;
        }
        // An update that adds or appends cannot compute its result: it reads it back.
        let (mut info, action, done, read_back) = match w.action(None, stored.as_ref(), want) {
            Ok((info, action, done)) => (info, action, done, false),
            Err(Error::InvalidRequest {
                problem: RequestProblem::UniqueComputed { .. }, ..
            }) if want => {
                let (info, action, done) = w.action(None, stored.as_ref(), false)?;
                (info, action, done, true)
            }
            Err(e) => return Err(e),
        };
        info.pk = read_key.pk().to_owned();
        info.sk = read_key.sk().map(str::to_owned);
        let mirror = match &other {
            Some(other) => vec![(info_of(other), mirror(&action, other, other_exists))],
            None => Vec::new(),
        };
        let primary = at_key(action, &read_key);
        let failed = match write::commit(w.db(), (info, primary), mirror).await {
            Ok(()) if read_back => {
                let item = write::read(w.db(), &read_key).await?;
                match w.read_back(item) {
                    Some(out) => return out,
                    None => return w.finish(done, stored, want),
                }
            }
            Ok(()) => return w.finish(done, stored, want),
            Err(failed) => failed,
        };
        match failed {
            Failed::Item(e) => return Err(e),
            // The other copy's condition: it appeared or went meanwhile.
            Failed::Other(e) if e.is_condition_failed() => other_exists = !other_exists,
            Failed::Conflict(_) => {}
            Failed::Other(e) => return Err(e),
        }
        if attempt >= REREAD_CONFLICTS.tries {
            return Err(Error::Rekey {
                entity: E::NAME,
                problem: RekeyProblem::Contended { key: read_key.to_string() },
            });
        }
        REREAD_CONFLICTS.pause(attempt).await;
        attempt += 1;
    }
}

/// What names an action of a re-key on the item at `key`: a failed condition is
/// [`Error::ConditionFailed`] with the stored item (when the action asked for it).
pub(crate) fn info_of<E: Entity>(key: &Key<E>) -> ActionInfo {
    let guard = Guard { kind: WriteKind::Check, expected_version: None };
    ActionInfo {
        entity: E::NAME,
        pk: key.pk().to_owned(),
        sk: key.sk().map(str::to_owned),
        explain: Some((guard, failed::<E>)),
        unique: None,
    }
}

fn failed<E: Entity>(_: Guard, pk: &str, sk: Option<&str>, current: Option<Item>) -> Error {
    let key = crate::model::key_display(Some(pk), sk);
    Error::ConditionFailed { entity: E::NAME, key, current: current.map(Box::new) }
}

/// `action` on the item at `key` instead (a put's item takes the key's attributes).
fn at_key<E: Entity>(mut action: Action, key: &Key<E>) -> Action {
    let key = key_item(key);
    match &mut action.kind {
        Kind::Put(item) => item.extend(key),
        Kind::Update { key: k, .. } | Kind::Delete(k) | Kind::Check(k) => *k = key,
    }
    action
}

/// The write of `action` on the other copy at `key`: a put or a delete whatever is there; an
/// update of the copy if it exists (`exists`), else a check that there is none.
fn mirror<E: Entity>(action: &Action, key: &Key<E>, exists: bool) -> Action {
    let pk = <E::Table as Table>::PK;
    match &action.kind {
        Kind::Put(item) => {
            let mut item: Item = item.clone();
            item.extend(key_item(key));
            Action::put(item)
        }
        Kind::Delete(_) | Kind::Check(_) => Action::delete(key_item(key)),
        Kind::Update { expression, .. } if exists => {
            // The expression's own names and values, without the guard's.
            let names = action.names.as_ref().map(|n| used(n, expression));
            let values = action.values.as_ref().map(|v| used(v, expression));
            let mut names = names.unwrap_or_default();
            let name = "#rekey_pk".to_owned();
            names.insert(name.clone(), pk.to_owned());
            let mut out = Action::update(key_item(key), expression.clone());
            out.condition = Some(format!("attribute_exists({name})"));
            out.names = Some(names);
            out.values = values.filter(|v| !v.is_empty());
            out
        }
        Kind::Update { .. } => {
            let mut x = ExprBuilder::default();
            let attr = x.name(pk);
            Action::check(key_item(key)).guarded(format!("attribute_not_exists({attr})"), x)
        }
    }
}

/// The entries of `map` whose placeholder (`#n3`, `:v0`) occurs in `expression` as a whole
/// token.
fn used<V: Clone>(
    map: &std::collections::HashMap<String, V>,
    expression: &str,
) -> std::collections::HashMap<String, V> {
    let occurs = |token: &str| {
        expression.match_indices(token).any(|(at, _)| {
            let next = expression[at + token.len()..].chars().next();
            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    map.iter().filter(|(k, _)| occurs(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
}
