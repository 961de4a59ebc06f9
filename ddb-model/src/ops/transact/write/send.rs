//! Sending a transaction: the token checked, deferred actions rendered, the limits
//! checked, one `TransactWriteItems` (sent again under its token after a transport
//! failure), and a failure mapped to its typed error.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::action::Action;
use super::limits::{checked, invalid};
use super::{Entry, Rebuild, Transaction};
use crate::db::Db;
use crate::error::Error;
use crate::model::Table;
use crate::ops::idempotency_token;
use crate::ops::retry::{self, SendError};
use crate::ops::transact::{ActionInfo, MAX_TOKEN_CHARS, TransactionProblem, map_cancellation};
use crate::stats::Op;

impl<'a, T: Table> Transaction<'a, T> {
    /// Checks the transaction and sends it: one `TransactWriteItems` request (none when it
    /// has no action). Example: [`Transaction`].
    pub async fn send(self) -> Result<(), Error> {
        let Transaction { db, actions, token, rebuild, .. } = self;
        let token = match token {
            Some(token) => {
                let len = token.chars().count();
                if len == 0 || len > MAX_TOKEN_CHARS {
                    return Err(invalid(TransactionProblem::InvalidToken {
                        len,
                        max: MAX_TOKEN_CHARS,
                    }));
                }
                token
            }
            None => idempotency_token(),
        };
        let actions = checked(resolve(actions).await)?;
        if actions.is_empty() {
            return Ok(());
        }

        let mut items = Vec::with_capacity(actions.len());
        let mut infos = Vec::with_capacity(actions.len());
        let mut commits = Vec::new();
        for action in actions {
            items.push(action.item);
            infos.push(action.info);
            commits.extend(action.on_commit);
        }

        let call = retry::Call::of_all(Op::TransactWriteItems, infos.iter().map(|i| i.entity));
        match send_transact_write(db, items, token.clone(), rebuild, call).await {
            Ok(()) => {
                for commit in commits {
                    commit();
                }
                Ok(())
            }
            Err(err) => Err(match err.into_service() {
                Ok(err) => transaction_error(err, &infos, token),
                Err(e) => e,
            }),
        }
    }
}

/// Sends one `TransactWriteItems` request carrying the idempotency `token`, counting the
/// request and the capacity it consumed. Shared by [`Transaction`] (and so by the tree and
/// graph protocols) and the updates that are sent as a one-action transaction.
///
/// The token makes the request safe to send again: when the SDK's attempts run out on a
/// transport failure, it is sent again under the token-carrying retry policy
/// ([`retry::send_retrying`]), with the items `rebuild` renders again (the first send takes
/// `items` as they are) or, without it, a copy of the request taken before each send.
/// `call` names the entity of every item, when they are one entity's (the cost report's).
pub(crate) async fn send_transact_write<T: Table>(
    db: &Db<T>,
    items: Vec<TransactWriteItem>,
    token: String,
    rebuild: Option<&Rebuild<'_>>,
    call: retry::Call<'_>,
) -> Result<(), SendError> {
    crate::ops::tenant::transact(db, &items).map_err(SendError::Typed)?;
    let request = |items| {
        db.client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(token.clone())
            .set_return_consumed_capacity(db.capacity_mode())
    };
    // A retry without `rebuild` sends a copy taken before the first send.
    let saved = if rebuild.is_none() { items.clone() } else { Vec::new() };
    let mut first = Some(items);
    retry::send_retrying(db, call, || {
        let items = match (first.take(), rebuild) {
            (Some(items), _) => items,
            (None, Some(rebuild)) => rebuild()?,
            (None, None) => saved.clone(),
        };
        Ok(request(items))
    })
    .await?;
    Ok(())
}

/// The actions with every deferred one rendered (its read sent), in order; a deferred one
/// that failed is kept as its error, reported with its index.
async fn resolve(entries: Vec<Entry<'_>>) -> Vec<Result<Action<'_>, Error>> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        match entry {
            Entry::Ready(action) => out.push(action),
            Entry::Deferred(rendering) => match rendering.await {
                Ok(actions) => out.extend(actions.into_iter().map(Ok)),
                Err(e) => out.push(Err(e)),
            },
        }
    }
    out
}

/// Maps a canceled transaction to [`Error::TransactionCanceled`], with a reason per action.
pub(crate) fn canceled(
    e: aws_sdk_dynamodb::types::error::TransactionCanceledException,
    infos: &[ActionInfo],
) -> Error {
    let reasons = map_cancellation(e.cancellation_reasons(), infos);
    Error::TransactionCanceled {
        reasons,
        source: Box::new(aws_sdk_dynamodb::Error::TransactionCanceledException(e)),
    }
}

/// Maps a failed `TransactWriteItems` to a typed error.
fn transaction_error(err: aws_sdk_dynamodb::Error, infos: &[ActionInfo], token: String) -> Error {
    use aws_sdk_dynamodb::Error as E;
    match err {
        E::TransactionCanceledException(e) => canceled(e, infos),
        E::TransactionInProgressException(e) => Error::TransactionInProgress {
            token,
            source: Box::new(E::TransactionInProgressException(e)),
        },
        E::IdempotentParameterMismatchException(e) => Error::IdempotentParameterMismatch {
            token,
            source: Box::new(E::IdempotentParameterMismatchException(e)),
        },
        other => Error::service(Op::TransactWriteItems, other),
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::error::{
        IdempotentParameterMismatchException, TransactionInProgressException,
    };

    use super::*;

    #[test]
    fn token_errors_name_the_token() {
        let in_progress = transaction_error(
            aws_sdk_dynamodb::Error::TransactionInProgressException(
                TransactionInProgressException::builder().build(),
            ),
            &[],
            "tok-1".to_owned(),
        );
        assert!(
            matches!(&in_progress, Error::TransactionInProgress { token, .. } if token == "tok-1")
        );
        let mismatch = transaction_error(
            aws_sdk_dynamodb::Error::IdempotentParameterMismatchException(
                IdempotentParameterMismatchException::builder().build(),
            ),
            &[],
            "tok-2".to_owned(),
        );
        assert!(
            matches!(&mismatch, Error::IdempotentParameterMismatch { token, .. } if token == "tok-2")
        );
        assert!(mismatch.to_string().contains("tok-2"), "{mismatch}");
    }
}
