//! [`RekeyProblem`]: why a re-key ([`Db::rekey`](crate::Db::rekey)) stopped or was refused;
//! and [`RekeyPhase`], which problems name (re-exported from `ops`).

/// Why a re-key run was refused or stopped ([`Error::Rekey`](super::Error::Rekey)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RekeyProblem {
    /// The entity declares no old layout (`#[entity(rekey(pk = ".."))]`): nothing to
    /// re-key. Nothing was sent.
    #[error("the entity declares no `rekey(pk = ..)` layout to re-key from")]
    NotDeclared,
    /// Another runner took the re-key over (it wrote its own token on the control item):
    /// this runner's last transaction was refused by its fence check and wrote nothing. Let
    /// the other runner finish, or resume from your checkpoint, which takes it back.
    #[error(
        "another runner took the re-key over (token `{token}` is no longer the control item's)"
    )]
    Superseded {
        /// This runner's token.
        token: String,
    },
    /// An item kept changing under the copy (or the removal) through every try: concurrent
    /// writers win; run the step again to pick it up. Nothing was written for it.
    #[error("the item `{key}` kept changing while it was copied")]
    Contended {
        /// The item's key, as `pk` or `pk / sk`.
        key: String,
    },
    /// An operation that cannot keep both copies of a re-keyed entity in step, or cannot
    /// read the copy the handle's phase reads: batch writes and composed transactions while
    /// both copies are kept, queries of the table's key while the old copies are read. Use
    /// the single-item operations (`get`, `put`, `update`, `delete`), or an index query.
    /// Nothing was sent.
    #[error("{operation} is refused in re-key phase {phase:?}: use the single-item operations")]
    Unsupported {
        /// The operation refused.
        operation: &'static str,
        /// The handle's phase for the entity.
        phase: RekeyPhase,
    },
}

/// Where a deployment's reads and writes of a re-keyed entity go while its items move (set
/// per handle with [`Db::with_rekey_phase`](crate::Db::with_rekey_phase)). The phases run in this order, each deployed
/// everywhere before the next begins; two processes one phase apart are safe together.
///
/// | phase | reads | writes |
/// |---|---|---|
/// | [`Old`](RekeyPhase::Old) (the default of an entity that declares `rekey`) | old layout | old layout |
/// | [`WriteBoth`](RekeyPhase::WriteBoth) | old layout | both copies, in one transaction |
/// | [`ReadNew`](RekeyPhase::ReadNew) | new layout | both copies, in one transaction |
/// | [`New`](RekeyPhase::New) (an entity without `rekey`) | new layout | new layout |
///
/// The [copy](crate::Db::rekey) runs once every process is in `WriteBoth`; `ReadNew` is deployed
/// after it finished; the [cleanup](crate::ops::Rekey::cleanup) runs once every process is in `New`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RekeyPhase {
    /// Before the copy: reads and writes use the old layout only.
    Old,
    /// Writes keep both copies (the old one, and the new one once it exists) in step; reads
    /// use the old layout. The copy runs in this phase.
    WriteBoth,
    /// After the copy: reads use the new layout; writes still keep both copies in step.
    ReadNew,
    /// Reads and writes use the new layout only; the cleanup removes the old copies.
    New,
}
