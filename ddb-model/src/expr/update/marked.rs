//! Rendering [`UpdateActions`] for the updates that return what they produced
//! (`crate::ops::update`): one `UpdateItem` made idempotent by marker attributes that record
//! the values it computed.

use aws_sdk_dynamodb::types::AttributeValue;

use super::render::{append, plus, push_clause};
use super::{SetRhs, UpdateActions};
use crate::error::Error;
use crate::expr::{ExprBuilder, Operand, Path, check_expression};

impl<E> UpdateActions<E> {
    /// Renders the update for a single `UpdateItem` whose every computed value is also
    /// written to a marker attribute (`{marker}.0`, `{marker}.1`, ...): `add` is rendered as
    /// `SET p = if_not_exists(p, 0) + v` (for numbers the same as `ADD p v`), and `append`,
    /// `set_if_not_exists` and the version bump write the same expression to their marker.
    /// DynamoDB evaluates every operand against the item before the update, so each marker
    /// holds exactly the value its path gets.
    pub(crate) fn render_marked(
        &self,
        b: &mut ExprBuilder,
        version: Option<&'static str>,
        marker: &str,
    ) -> Result<Marked, Error> {
        // Overlap checks and the empty-update check are those of `render`.
        self.render(&mut ExprBuilder::default(), version)?;
        let mut out = Marked {
            expression: String::new(),
            detect: String::new(),
            markers: Vec::new(),
            computed: Vec::new(),
            plain: Vec::new(),
            removed: self.l.remove.clone(),
        };
        let mut plain_clauses = Vec::new();
        let mut clauses = Vec::new();
        let mut computed =
            |out: &mut Marked, b: &mut ExprBuilder, path: Path, p: String, rhs: String| {
                let name = format!("{marker}.{}", out.markers.len());
                let m = b.name(&name);
                if out.markers.is_empty() {
                    out.detect = m.clone();
                }
                clauses.push(format!("{p} = {rhs}"));
                clauses.push(format!("{m} = {rhs}"));
                out.computed.push((path, name.clone()));
                out.markers.push(name);
            };
        for (path, rhs) in &self.l.set {
            let p = b.path(path);
            match rhs {
                SetRhs::Value(v) => {
                    let value = b.operand(v)?;
                    if let Operand::Value(av, _) = v {
                        out.plain.push((path.clone(), av.clone()));
                    }
                    plain_clauses.push(format!("{p} = {value}"));
                }
                SetRhs::IfNotExists(v) => {
                    let rhs = format!("if_not_exists({p}, {})", b.operand(v)?);
                    computed(&mut out, b, path.clone(), p, rhs);
                }
                SetRhs::Append(v) => {
                    let rhs = append(b, &p, v)?;
                    computed(&mut out, b, path.clone(), p, rhs);
                }
            }
        }
        for (path, v) in &self.l.add {
            let p = b.path(path);
            let rhs = plus(b, &p, Some(v))?;
            computed(&mut out, b, path.clone(), p, rhs);
        }
        if let Some(attr) = version {
            let p = b.name(attr);
            let rhs = plus(b, &p, None)?;
            computed(&mut out, b, Path::attr(attr), p, rhs);
        }
        clauses.extend(plain_clauses);
        if out.markers.is_empty() {
            // Nothing computed: a flag says the update was applied.
            let name = format!("{marker}.0");
            let m = b.name(&name);
            let flag = b.value(AttributeValue::Bool(true));
            clauses.push(format!("{m} = {flag}"));
            out.detect = m;
            out.markers.push(name);
        }
        push_clause(&mut out.expression, "SET", &clauses);
        let removed: Vec<String> = self.l.remove.iter().map(|p| b.path(p)).collect();
        push_clause(&mut out.expression, "REMOVE", &removed);
        // Set elements added and deleted are idempotent: sent as they are, not marked. A
        // retry that finds the marker returns them as stored then.
        let added: Vec<&(Path, Operand)> = self.l.add_set.iter().collect();
        self.render_sets(b, &mut out.expression, &added)?;
        // The markers lengthen the expression: the limit applies to what is sent.
        check_expression("UpdateExpression", &out.expression)?;
        Ok(out)
    }
}

/// An update rendered by [`UpdateActions::render_marked`].
#[derive(Debug)]
pub(crate) struct Marked {
    /// The update expression.
    pub expression: String,
    /// The placeholder of the first marker, whose presence means the update was applied.
    pub detect: String,
    /// The marker attribute names, in order.
    pub markers: Vec<String>,
    /// Each path whose value the update computes, with the marker that holds that value.
    pub computed: Vec<(Path, String)>,
    /// Each path the update sets to a given value, with the value.
    pub plain: Vec<(Path, AttributeValue)>,
    /// The paths the update removes.
    pub removed: Vec<Path>,
}
