//! The degree counter moves of one edge transaction, merged per node item.

use std::collections::HashSet;

use aws_sdk_dynamodb::types::AttributeValue;

use super::action::{Raw, shard_update, update};
use crate::edge::{CounterRef, Edge, InverseSpec, node_text};
use crate::error::Error;
use crate::expr::ExprBuilder;
use crate::model::Table;

/// Counter moves of one transaction, merged per node item (one action per item: a
/// self-loop moves both counters of its node in one update).
#[derive(Default, Clone)]
pub(crate) struct Moves {
    groups: Vec<(CounterRef, Vec<(&'static str, i64)>)>,
}

impl Moves {
    pub(crate) fn add(&mut self, counter: &CounterRef, delta: i64) {
        let same = |c: &CounterRef| c.pk == counter.pk && c.sk == counter.sk;
        let adds = match self.groups.iter_mut().find(|(c, _)| same(c)) {
            Some((_, adds)) => adds,
            None => {
                self.groups.push((counter.clone(), Vec::new()));
                match self.groups.last_mut() {
                    Some((_, adds)) => adds,
                    None => return,
                }
            }
        };
        match adds.iter_mut().find(|(attr, _)| *attr == counter.attr) {
            Some((_, d)) => *d += delta,
            None => adds.push((counter.attr, delta)),
        }
    }

    /// Adds the counter moves of the edge `from -> to` (a symmetric self-loop is one item,
    /// so it counts once).
    pub(crate) fn edge<E: Edge>(
        &mut self,
        from: &E::From,
        to: &E::To,
        delta: i64,
        skip: &HashSet<(String, Option<String>)>,
    ) -> Result<(), Error> {
        let counters = E::counters(Some(from), Some(to));
        let mirror_of_itself =
            matches!(E::SPEC.inverse, InverseSpec::Symmetric) && node_text(from) == node_text(to);
        // A sharded counter moves the shard the other endpoint hashes to.
        let sides = [
            Some(counters.from).map(|c| (c, node_text(to))),
            (!mirror_of_itself).then_some(counters.to).map(|c| (c, node_text(from))),
        ];
        for (counter, other) in sides.into_iter().flatten() {
            let Some(counter) = counter else { continue };
            let counter = counter?.for_edge(&other);
            if !skip.contains(&(counter.pk.clone(), counter.sk.clone())) {
                self.add(&counter, delta);
            }
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }

    /// The node keys moved, in action order.
    pub(crate) fn keys(&self) -> Vec<(String, Option<String>)> {
        self.groups.iter().map(|(c, _)| (c.pk.clone(), c.sk.clone())).collect()
    }

    pub(crate) fn actions<T: Table>(self, table: &str) -> Vec<Result<Raw, Error>> {
        self.groups
            .into_iter()
            .filter(|(_, adds)| adds.iter().any(|(_, d)| *d != 0))
            .map(|(c, adds)| {
                let clauses = |b: &mut ExprBuilder| -> String {
                    let clauses: Vec<String> = adds
                        .iter()
                        .filter(|(_, d)| *d != 0)
                        .map(|(attr, d)| {
                            let name = b.name(attr);
                            let value = b.value(AttributeValue::N(d.to_string()));
                            format!("{name} {value}")
                        })
                        .collect();
                    clauses.join(", ")
                };
                if c.shard.is_some() {
                    return shard_update::<T>(table, &c, clauses);
                }
                update::<T>(table, c.entity, (&c.pk, c.sk.as_deref()), c.explain, |b| {
                    Ok((format!("ADD {}", clauses(b)), None))
                })
            })
            .collect()
    }
}
