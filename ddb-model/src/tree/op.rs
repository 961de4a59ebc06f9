//! What the resumable protocols of every strategy share: the intent record's item form,
//! progress reports, and the size of a protocol step.

// Re-exported for the strategies (`crate::tree::op::OpPhase`, ...).
pub(crate) use crate::error::{OpKind, OpPhase, TreeOp};

use std::str::FromStr;

use super::problem;
use super::raw::{
    OP_EPOCH, OP_FROM, OP_KIND, OP_LOAD, OP_NODES, OP_PARENT, OP_PHASE, OP_TO, OP_TOKEN,
};
use crate::error::{Error, IntentReason, TreePath, TreeProblem};
use crate::item::Item;
use crate::model::{Entity, string_attr};

/// What an intent record names as the node of an operation on the whole tree (a nested-set
/// renumbering of every node): `~` starts no escaped id. Writes of a nested-set tree name it
/// among the nodes they must not touch while an operation is in progress, so that such an
/// intent refuses them all.
pub(crate) const WHOLE_TREE: &str = "~tree";

/// Nodes a closure protocol step handles at a time (their writes go in fenced transactions of
/// 99).
pub(crate) const CHUNK: usize = 100;

// The intent record's item form. `TreeOp` itself is defined in `error::tree`, because tree
// problems carry it.
impl TreeOp {
    /// A new operation `kind` at `phase`, with a fresh token.
    pub(crate) fn start(kind: OpKind, phase: OpPhase) -> TreeOp {
        TreeOp { kind, phase, token: crate::ops::idempotency_token(), epoch: 0 }
    }

    pub(crate) fn fields(&self) -> Vec<(&'static str, String)> {
        let mut out =
            vec![(OP_PHASE, self.phase.as_str().to_owned()), (OP_TOKEN, self.token.clone())];
        match &self.kind {
            OpKind::Move { from, to } => {
                out.push((OP_KIND, "move".to_owned()));
                out.push((OP_FROM, from.to_text()));
                out.push((OP_TO, to.to_text()));
            }
            OpKind::Delete { root } => {
                out.push((OP_KIND, "delete".to_owned()));
                out.push((OP_FROM, root.to_text()));
            }
            OpKind::MoveNode { node, parent } => {
                out.push((OP_KIND, "move-node".to_owned()));
                out.push((OP_FROM, super::node::esc(node)));
                out.push((OP_PARENT, parent.as_deref().map_or_else(String::new, super::node::esc)));
            }
            OpKind::DeleteNode { node } => {
                out.push((OP_KIND, "delete-node".to_owned()));
                out.push((OP_FROM, super::node::esc(node)));
            }
            OpKind::Renumber { node } => {
                out.push((OP_KIND, "renumber".to_owned()));
                let from = node.as_deref().map_or_else(|| WHOLE_TREE.to_owned(), super::node::esc);
                out.push((OP_FROM, from));
            }
            OpKind::Load { nodes } => {
                out.push((OP_KIND, OP_LOAD.to_owned()));
                out.push((OP_NODES, nodes.to_string()));
            }
        }
        out
    }

    /// Reads an intent record.
    pub(crate) fn from_item(item: &Item) -> Result<TreeOp, TreeProblem> {
        let corrupt = |reason| TreeProblem::CorruptIntent { reason };
        let invalid = |attribute| corrupt(IntentReason::Invalid { attribute });
        let field = |attribute: &'static str| {
            string_attr(item, attribute).ok_or(corrupt(IntentReason::Missing { attribute }))
        };
        let path = |attribute: &'static str| {
            TreePath::parse(field(attribute)?)
                .map_err(|problem| corrupt(IntentReason::Path { attribute, problem }))
        };
        let id = |attr| field(attr).map(super::node::display);
        let kind = match field(OP_KIND)? {
            "move" => OpKind::Move { from: path(OP_FROM)?, to: path(OP_TO)? },
            "delete" => OpKind::Delete { root: path(OP_FROM)? },
            "move-node" => OpKind::MoveNode {
                node: id(OP_FROM)?,
                parent: Some(id(OP_PARENT)?).filter(|parent| !parent.is_empty()),
            },
            "delete-node" => OpKind::DeleteNode { node: id(OP_FROM)? },
            "renumber" => match field(OP_FROM)? {
                WHOLE_TREE => OpKind::Renumber { node: None },
                _ => OpKind::Renumber { node: Some(id(OP_FROM)?) },
            },
            OP_LOAD => {
                OpKind::Load { nodes: field(OP_NODES)?.parse().map_err(|_| invalid(OP_NODES))? }
            }
            other => {
                return Err(corrupt(IntentReason::UnknownOperation { kind: other.to_owned() }));
            }
        };
        let phase = field(OP_PHASE)?;
        let phase = OpPhase::parse(phase)
            .ok_or_else(|| corrupt(IntentReason::UnknownPhase { phase: phase.to_owned() }))?;
        let epoch = match item.get(OP_EPOCH) {
            None => 0,
            Some(aws_sdk_dynamodb::types::AttributeValue::N(n)) => {
                n.parse().map_err(|_| invalid(OP_EPOCH))?
            }
            Some(_) => return Err(invalid(OP_EPOCH)),
        };
        Ok(TreeOp { kind, phase, token: field(OP_TOKEN)?.to_owned(), epoch })
    }
}

/// [`TreeProblem::CorruptIntent`] as an error of entity `E`.
pub(crate) fn corrupt_intent<E: Entity>(reason: IntentReason) -> Error {
    problem::<E>(TreeProblem::CorruptIntent { reason })
}

/// The field `attribute` of the intent record `item` read as a `T`: a corrupt intent when it
/// is missing or does not read.
pub(crate) fn intent_value<E: Entity, T: FromStr>(
    item: &Item,
    attribute: &'static str,
) -> Result<T, Error> {
    let text = string_attr(item, attribute)
        .ok_or_else(|| corrupt_intent::<E>(IntentReason::Missing { attribute }))?;
    text.parse().map_err(|_| corrupt_intent::<E>(IntentReason::Invalid { attribute }))
}

/// The intent field that records `phase`.
pub(crate) fn entering(phase: OpPhase) -> (&'static str, String) {
    (OP_PHASE, phase.as_str().to_owned())
}

/// Progress of a large move or delete, reported after every batch of nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The phase: [`OpPhase::Copy`] or [`OpPhase::Remove`].
    pub phase: OpPhase,
    /// Nodes done in this phase.
    pub done: usize,
    /// Nodes of this phase in all.
    pub total: usize,
}

/// What a move, delete or resume did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpReport {
    /// The nodes moved or deleted.
    pub nodes: usize,
    /// True when the operation went through the resumable protocol (more nodes than one
    /// transaction holds), false when it was one transaction.
    pub resumable: bool,
}

/// The progress callback of a large operation.
pub(crate) type ProgressFn<'p> = Box<dyn FnMut(Progress) + Send + 'p>;

/// The report of an operation that was one transaction, after telling `progress` each of its
/// `phases` done at once.
pub(crate) fn reported(
    report: OpReport,
    phases: &[OpPhase],
    progress: &mut ProgressFn,
) -> OpReport {
    for &phase in phases {
        progress(Progress { phase, done: report.nodes, total: report.nodes });
    }
    report
}

/// A progress callback that reports nothing.
pub(crate) fn quiet<'p>() -> ProgressFn<'p> {
    Box::new(|_| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An intent record as stored: its fields as string attributes.
    fn stored(op: &TreeOp) -> Item {
        let fields = op.fields();
        let mut item = Item::new();
        for (attr, value) in &fields {
            item.insert((*attr).to_owned(), crate::tree::raw::s(value));
        }
        item
    }

    #[test]
    fn renumbering_intents_read_back() {
        for node in [None, Some("cat/1".to_owned()), Some("~tree".to_owned()), Some(String::new())]
        {
            let op = TreeOp {
                kind: OpKind::Renumber { node: node.clone() },
                phase: OpPhase::Copy,
                token: "t".into(),
                epoch: 0,
            };
            let item = stored(&op);
            assert_eq!(TreeOp::from_item(&item), Ok(op.clone()), "{node:?}");
            // The whole tree is named by a text no escaped id can be.
            let from = string_attr(&item, OP_FROM).map(str::to_owned);
            assert_eq!(from.as_deref() == Some(WHOLE_TREE), node.is_none(), "{from:?}");
        }
    }

    #[test]
    fn unreadable_intents_name_their_reason() {
        let op = TreeOp::start(OpKind::Delete { root: "a/b".parse().unwrap() }, OpPhase::Copy);
        let read = |edit: &dyn Fn(&mut Item)| {
            let mut item = stored(&op);
            edit(&mut item);
            match TreeOp::from_item(&item) {
                Err(TreeProblem::CorruptIntent { reason }) => (reason.to_string(), reason),
                other => panic!("{other:?}"),
            }
        };
        let n = |v: &str| aws_sdk_dynamodb::types::AttributeValue::N(v.to_owned());
        let s = crate::tree::raw::s;
        let (text, reason) = read(&|item| drop(item.remove(OP_TOKEN)));
        assert_eq!(reason, IntentReason::Missing { attribute: OP_TOKEN });
        assert_eq!(text, "attribute `token` is missing or not a string");
        let (text, reason) = read(&|item| drop(item.insert(OP_FROM.into(), s("a//b"))));
        assert!(matches!(reason, IntentReason::Path { attribute: OP_FROM, .. }), "{reason:?}");
        assert!(text.starts_with("attribute `from`: "), "{text}");
        let (text, reason) = read(&|item| drop(item.insert(OP_KIND.into(), s("x"))));
        assert_eq!(reason, IntentReason::UnknownOperation { kind: "x".into() });
        assert_eq!(text, "unknown operation \"x\"");
        let (_, reason) = read(&|item| drop(item.insert(OP_PHASE.into(), s("later"))));
        assert_eq!(reason, IntentReason::UnknownPhase { phase: "later".into() });
        for epoch in [n("-1"), s("1")] {
            let (text, reason) = read(&|item| drop(item.insert(OP_EPOCH.into(), epoch.clone())));
            assert_eq!(reason, IntentReason::Invalid { attribute: OP_EPOCH });
            assert_eq!(text, "attribute `epoch` is invalid");
        }
        let foreign = IntentReason::Foreign { op: Box::new(op.clone()), handle: "NestedTree" };
        assert_eq!(foreign.to_string(), format!("{op} is not an operation of a NestedTree"));
    }
}
