//! Rendering [`UpdateActions`] as one update expression, after the checks DynamoDB makes of
//! any update: no action, overlapping paths, values too deep or too large together.

use aws_sdk_dynamodb::types::AttributeValue;

use super::{SetRhs, UpdateActions};
use crate::error::{Error, RequestProblem};
use crate::expr::{ExprBuilder, MAX_NESTING_LEVELS, Operand, Path, PathSegment, check_expression};
use crate::item::MAX_ITEM_BYTES;

impl<E> UpdateActions<E> {
    /// Renders the update expression. `version` is the version attribute to bump, if any.
    pub(crate) fn render(
        &self,
        b: &mut ExprBuilder,
        version: Option<&'static str>,
    ) -> Result<String, Error> {
        if self.is_empty() {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::EmptyUpdate,
            });
        }
        let paths: Vec<&Path> = self.paths().collect();
        for (i, a) in paths.iter().enumerate() {
            for other in &paths[i + 1..] {
                if a.overlaps(other) {
                    return Err(Error::InvalidRequest {
                        path: a.to_string(),
                        problem: RequestProblem::OverlappingPaths { other: other.to_string() },
                    });
                }
            }
        }
        self.check_written()?;

        let mut set_clauses = Vec::with_capacity(self.l.set.len() + 1);
        for (path, rhs) in &self.l.set {
            let p = b.user_path(path)?;
            set_clauses.push(match rhs {
                SetRhs::Value(v) => format!("{p} = {}", b.operand(v)?),
                SetRhs::IfNotExists(v) => format!("{p} = if_not_exists({p}, {})", b.operand(v)?),
                SetRhs::Append(v) => format!("{p} = {}", append(b, &p, v)?),
            });
        }
        if let Some(attr) = version {
            let p = b.name(attr);
            set_clauses.push(format!("{p} = {}", plus(b, &p, None)?));
        }
        let mut out = String::new();
        push_clause(&mut out, "SET", &set_clauses);
        let removed =
            self.l.remove.iter().map(|p| b.user_path(p)).collect::<Result<Vec<_>, _>>()?;
        push_clause(&mut out, "REMOVE", &removed);
        let added: Vec<&(Path, Operand)> = self.l.add.iter().chain(&self.l.add_set).collect();
        self.render_sets(b, &mut out, &added)?;
        check_expression("UpdateExpression", &out)?;
        Ok(out)
    }

    /// Appends the `ADD` clause of `added` and the `DELETE` clause of the set deletions.
    pub(super) fn render_sets(
        &self,
        b: &mut ExprBuilder,
        out: &mut String,
        added: &[&(Path, Operand)],
    ) -> Result<(), Error> {
        let deleted: Vec<&(Path, Operand)> = self.l.delete_set.iter().collect();
        for (keyword, actions) in [("ADD", added), ("DELETE", &deleted[..])] {
            let clause = |(path, v): &&(Path, Operand)| {
                Ok::<_, Error>(format!("{} {}", b.user_path(path)?, b.operand(v)?))
            };
            push_clause(out, keyword, &actions.iter().map(clause).collect::<Result<Vec<_>, _>>()?);
        }
        Ok(())
    }

    /// What DynamoDB checks of the values an update writes, whatever the item holds: each
    /// fits in an item where it is written (nesting below its path; the size of one value is
    /// checked when it is converted), and together they fit in one item (the paths do not overlap, so their sizes add up).
    fn check_written(&self) -> Result<(), Error> {
        let mut total = 0usize;
        for (path, rhs) in &self.l.set {
            // A value that failed its checks reports them when it is rendered.
            let Some(shape) = rhs.operand().shape() else { continue };
            let invalid = |problem| Error::InvalidRequest { path: path.to_string(), problem };
            let levels = shape.levels + path.segments().len().saturating_sub(1);
            if levels > MAX_NESTING_LEVELS {
                return Err(invalid(RequestProblem::TooDeep { levels, max: MAX_NESTING_LEVELS }));
            }
            // The name the value is stored under (a map key, or 1 byte of a list element).
            let name = match path.segments() {
                [PathSegment::Name(n)] => n.len(),
                [.., PathSegment::Name(n)] => n.len() + 1,
                _ => 1,
            };
            total += name + shape.size;
        }
        for (path, v) in &self.l.add_set {
            let Some(shape) = v.shape() else { continue };
            total += path.to_string().len() + shape.size;
        }
        if total > MAX_ITEM_BYTES {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::UpdateTooLarge { size: total, max: MAX_ITEM_BYTES },
            });
        }
        Ok(())
    }
}

/// Appends `KEYWORD c1, c2` to `out` (after a space unless it is empty); nothing without
/// clauses.
pub(super) fn push_clause(out: &mut String, keyword: &str, clauses: &[String]) {
    if clauses.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(keyword);
    out.push(' ');
    out.push_str(&clauses.join(", "));
}

/// `list_append(if_not_exists(p, []), v)`: `v` appended to the list at `p` (placeholder text).
pub(super) fn append(b: &mut ExprBuilder, p: &str, v: &Operand) -> Result<String, Error> {
    let empty = b.value(AttributeValue::L(Vec::new()));
    Ok(format!("list_append(if_not_exists({p}, {empty}), {})", b.operand(v)?))
}

/// `if_not_exists(p, 0) + v`: the number at `p` plus `v`, or plus 1 (the version bump).
pub(super) fn plus(b: &mut ExprBuilder, p: &str, v: Option<&Operand>) -> Result<String, Error> {
    let zero = b.value(AttributeValue::N("0".into()));
    let v = match v {
        Some(v) => b.operand(v)?,
        None => b.value(AttributeValue::N("1".into())),
    };
    Ok(format!("if_not_exists({p}, {zero}) + {v}"))
}
