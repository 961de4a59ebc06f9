//! Unlinking: [`Edges::unlink`], and the actions that remove an edge, which removing a
//! node's edges reuses.

use std::collections::HashSet;

use super::action::{Need, Raw, delete, explain_other};
use super::moves::Moves;
use crate::edge::keys::{forward_key, other_key, other_type};
use crate::edge::{Edge, Edges, InverseSpec, arg_text, node_text, parse_node};
use crate::error::Error;
use crate::key::KeyArg;
use crate::ops::transact::explain;

/// What [`Edges::unlink`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlinked {
    /// The edge was removed, both sides (and the counters moved).
    Removed,
    /// There was no such edge; nothing changed.
    Absent,
}

impl Unlinked {
    /// True when this unlink removed an edge.
    pub fn was_linked(self) -> bool {
        self == Unlinked::Removed
    }
}

impl<'a, E: Edge> Edges<'a, E> {
    /// The actions that remove the edge `from -> to` (counters of `skip` nodes left alone);
    /// the counter keys, in action order after the item actions, and their first index.
    pub(crate) fn unlink_actions(
        &self,
        from: &E::From,
        to: &E::To,
        skip: &HashSet<(String, Option<String>)>,
        actions: &mut Vec<Result<Raw, Error>>,
        moves: &mut Moves,
    ) -> Result<(), Error> {
        let table = self.table();
        let (ft, tt) = (node_text(from), node_text(to));
        let key = forward_key::<E>(&ft, &tt);
        key.validate()?;
        actions.push(delete::<E::Table>(
            table,
            E::NAME,
            (key.pk(), key.sk()),
            Need::Present,
            explain::<E>,
        ));
        let mirror_of_itself = matches!(E::SPEC.inverse, InverseSpec::Symmetric) && ft == tt;
        if let Some((pk, sk)) = other_key::<E>(&ft, &tt).filter(|_| !mirror_of_itself) {
            actions.push(delete::<E::Table>(
                table,
                other_type::<E>(),
                (&pk, Some(&sk)),
                Need::AbsentOrSame,
                explain_other::<E>,
            ));
        }
        moves.edge::<E>(from, to, -1, skip)
    }

    /// Unlinks `from` and `to`: removes the forward item and, in the same transaction, the
    /// item of the other direction and the endpoints' counter decrements. One request.
    ///
    /// Idempotent: without the edge, the unlink is [`Unlinked::Absent`] and changes nothing.
    /// The counter of a node item that no longer exists is skipped.
    pub async fn unlink(
        &self,
        from: impl KeyArg<E::From>,
        to: impl KeyArg<E::To>,
    ) -> Result<Unlinked, Error> {
        let from: E::From = parse_node::<E, _>(E::SPEC.attrs.0, &arg_text(&from))?;
        let to: E::To = parse_node::<E, _>(E::SPEC.attrs.1, &arg_text(&to))?;
        Ok(match self.remove_edges(vec![(&from, &to)], None).await? {
            0 => Unlinked::Absent,
            _ => Unlinked::Removed,
        })
    }
}
