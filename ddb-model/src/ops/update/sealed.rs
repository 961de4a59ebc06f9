//! The update of a sealed entity (`#[encrypt]`, `#[sign_only]`). Its signature covers the
//! whole item, so no `UpdateItem` can keep it: the item is read (strongly consistent),
//! verified and decrypted, the update is applied to it in memory (`Update::produced`, which
//! a transaction's result is computed with too), and the item is sealed again and put back on
//! condition that the stored signature is still the one read, with the update's guard (type,
//! existence, version, the caller's condition). A concurrent write makes it start again from
//! a new read. Two requests: `GetItem`, `PutItem`.

use aws_sdk_dynamodb::types::AttributeValue;

use super::Update;
use crate::error::Error;
use crate::expr::{ExprBuilder, Node};
use crate::model::{Entity, SDK_ATTRS, from_opened_item, unsupported};
use crate::ops::action::Action;
use crate::ops::retry::{self, Try, UNIQUE_CONFLICTS};
use crate::ops::{Rendered, write};
use crate::stats::Op;

/// The SDK's signature attribute (the footer): a new one for every item it seals, so a
/// stored item that still holds the one read was not written since.
const FOOT: &str = SDK_ATTRS[1];

impl<E: Entity, R> Update<'_, E, R> {
    /// Sends the update of a sealed entity (see the module), with `held` added to its guard.
    pub(super) async fn send_sealed(
        &self,
        held: Option<&Node>,
        want_item: bool,
    ) -> Result<Option<E>, Error> {
        let db = self.db;
        db.can_seal::<E>()?;
        // What the update computes from the stored value (`add`, `append`, set elements) is
        // the service's work, which a sealed item cannot be given.
        if self.effective()?.0.plain_writes().is_none() {
            return Err(unsupported::<E>("an update with `add`, `append` or set elements"));
        }
        let key = self.key.clone();
        retry::on_conflict(UNIQUE_CONFLICTS, |_| async {
            let version = E::VERSION.map(|v| v.attr);
            let stored = write::read(db, &key).await?;
            let foot = stored.as_ref().and_then(|item| item.get(FOOT)).cloned();
            // The signature read, still stored; `attribute_not_exists` when there was none.
            let unchanged = Node::attr_is(FOOT, foot.clone());
            let guard = match held {
                Some(held) => held.clone().combine(unchanged, true),
                None => unchanged,
            };
            let (rendered, ()) = self.guarded(Some(&guard), |actions, _| {
                // The values' checks, as an `UpdateItem` of them would make them.
                actions.render(&mut ExprBuilder::default(), version).map(drop)
            })?;
            let Rendered { key: _, guard, condition, names, values } = rendered;
            if stored.is_none() && self.upsert.is_none() {
                return Err(guard.failure(&key, None));
            }
            let plain = stored.map(|item| db.sealer_ref().open_item::<E>(item)).transpose()?;
            let produced = self.produced(plain.as_ref())?;
            // The item written must read back: an upsert that creates it must have set every
            // field (nothing is sent otherwise).
            let entity = from_opened_item::<E>(produced.clone())?;
            let sealed = db.seal::<E>(produced)?;
            let request = Action::put(sealed)
                .with_expressions(condition, names, values)
                .return_old(true)
                .put_item(db)?
                .set_return_consumed_capacity(db.capacity_mode());
            match retry::send(db, retry::Call::of(Op::PutItem, E::NAME), request).await {
                Ok(_) => Ok(Try::Done(want_item.then_some(entity))),
                Err(err) => match err.into_service()? {
                    aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => {
                        let now = e.item.as_ref().and_then(|item| item.get(FOOT));
                        let failed = guard.failure(&key, e.item.clone());
                        if written_since(foot.as_ref(), now, e.item.is_some()) {
                            Ok(Try::Again(failed))
                        } else {
                            Err(failed)
                        }
                    }
                    other => Err(Error::service(Op::PutItem, other)),
                },
            }
        })
        .await
    }
}

/// True when the item was written between the read and the put: its signature is not the
/// one read (or it appeared or went away).
fn written_since(
    read: Option<&AttributeValue>,
    now: Option<&AttributeValue>,
    exists: bool,
) -> bool {
    match read {
        Some(read) => now != Some(read),
        None => exists,
    }
}
