//! Typed condition expressions.

use std::fmt;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

use super::path::{Attr, AttrPath, MapEntry, Path, ValueArg};
use super::{ExprBuilder, Operand};
use crate::error::Error;
use crate::error::RequestProblem;

/// DynamoDB attribute types, for [`Attr::is_type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// String.
    S,
    /// Number.
    N,
    /// Binary.
    B,
    /// Boolean.
    Bool,
    /// Null.
    Null,
    /// List.
    L,
    /// Map.
    M,
    /// String set.
    Ss,
    /// Number set.
    Ns,
    /// Binary set.
    Bs,
}

impl AttrType {
    fn code(self) -> &'static str {
        match self {
            AttrType::S => "S",
            AttrType::N => "N",
            AttrType::B => "B",
            AttrType::Bool => "BOOL",
            AttrType::Null => "NULL",
            AttrType::L => "L",
            AttrType::M => "M",
            AttrType::Ss => "SS",
            AttrType::Ns => "NS",
            AttrType::Bs => "BS",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::Ne => "<>",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Compare(Path, Cmp, Operand),
    Between(Path, Operand, Operand),
    In(Path, Vec<Operand>),
    Exists(Path),
    NotExists(Path),
    Type(Path, AttrType),
    BeginsWith(Path, Operand),
    Contains(Path, Operand),
    Size(Path, Cmp, Operand),
    /// Every operand holds; chains of `&` are kept flat. The `u8` is the nesting depth.
    And(Vec<Node>, u8),
    /// Some operand holds; chains of `|` are kept flat.
    Or(Vec<Node>, u8),
    Not(Box<Node>, u8),
    /// A combination nested deeper than [`MAX_CONDITION_DEPTH`]: rendering it is an error,
    /// and it holds no operands, so no recursion over the condition can run deep.
    TooDeep,
}

/// Deepest nesting of `&`, `|` and `!` a condition may have (chains of one operator count
/// once). Deeper combinations render as a typed error instead of recursing without bound.
pub(crate) const MAX_CONDITION_DEPTH: u8 = 64;

/// Largest number of operands DynamoDB accepts in `IN`.
const MAX_IN_OPERANDS: usize = 100;

impl Node {
    pub(crate) fn render(&self, b: &mut ExprBuilder) -> Result<String, Error> {
        Ok(match self {
            Node::Compare(p, cmp, v) => {
                format!("{} {} {}", b.user_path(p)?, cmp.symbol(), b.operand(v)?)
            }
            Node::Between(p, lo, hi) => {
                format!("{} BETWEEN {} AND {}", b.user_path(p)?, b.operand(lo)?, b.operand(hi)?)
            }
            Node::In(p, values) => {
                if values.is_empty() || values.len() > MAX_IN_OPERANDS {
                    return Err(Error::InvalidRequest {
                        path: p.to_string(),
                        problem: RequestProblem::InOperands {
                            count: values.len(),
                            max: MAX_IN_OPERANDS,
                        },
                    });
                }
                let path = b.user_path(p)?;
                let mut rendered = Vec::with_capacity(values.len());
                for v in values {
                    rendered.push(b.operand(v)?);
                }
                format!("{path} IN ({})", rendered.join(", "))
            }
            Node::Exists(p) => format!("attribute_exists({})", b.user_path(p)?),
            Node::NotExists(p) => format!("attribute_not_exists({})", b.user_path(p)?),
            Node::Type(p, t) => {
                let v = b.value(AttributeValue::S(t.code().to_owned()));
                format!("attribute_type({}, {v})", b.user_path(p)?)
            }
            Node::BeginsWith(p, v) => {
                format!("begins_with({}, {})", b.user_path(p)?, b.operand(v)?)
            }
            Node::Contains(p, v) => format!("contains({}, {})", b.user_path(p)?, b.operand(v)?),
            Node::Size(p, cmp, v) => {
                format!("size({}) {} {}", b.user_path(p)?, cmp.symbol(), b.operand(v)?)
            }
            Node::And(operands, _) => join(b, operands, " AND ")?,
            Node::Or(operands, _) => join(b, operands, " OR ")?,
            Node::Not(c, _) => format!("NOT ({})", c.render(b)?),
            Node::TooDeep => {
                return Err(Error::InvalidRequest {
                    path: String::new(),
                    problem: RequestProblem::ConditionTooDeep {
                        max: usize::from(MAX_CONDITION_DEPTH),
                    },
                });
            }
        })
    }

    /// How deeply `&`, `|` and `!` nest in this node (0 for a comparison).
    fn depth(&self) -> u8 {
        match self {
            Node::And(_, d) | Node::Or(_, d) | Node::Not(_, d) => *d,
            _ => 0,
        }
    }

    /// `attr = value`, or absent or NULL for `None`: the top-level attribute
    /// holds what it held when it was read.
    pub(crate) fn attr_is(attr: &'static str, value: Option<AttributeValue>) -> Node {
        let path = Path::attr(attr);
        match value {
            // serde writes `None` as NULL: absent and NULL both hold nothing.
            None | Some(AttributeValue::Null(_)) => {
                Node::NotExists(path.clone()).combine(Node::Type(path, AttrType::Null), false)
            }
            Some(v) => {
                let operand = Operand::checked(&path, v);
                Node::Compare(path, Cmp::Eq, operand)
            }
        }
    }

    /// `self AND other` (`and == true`) or `self OR other`, kept flat when an operand is
    /// already of that kind.
    pub(crate) fn combine(self, other: Node, and: bool) -> Node {
        if matches!(self, Node::TooDeep) || matches!(other, Node::TooDeep) {
            return Node::TooDeep;
        }
        let same =
            |n: &Node| if and { matches!(n, Node::And(..)) } else { matches!(n, Node::Or(..)) };
        let (ld, rd) = (self.depth(), other.depth());
        let (operands, depth) = match (same(&self), same(&other)) {
            (true, true) => {
                let (mut l, r) = (self.into_operands(), other.into_operands());
                l.extend(r);
                (l, ld.max(rd))
            }
            (true, false) => {
                let mut l = self.into_operands();
                l.push(other);
                (l, ld.max(rd.saturating_add(1)))
            }
            (false, true) => {
                let mut r = other.into_operands();
                r.insert(0, self);
                (r, rd.max(ld.saturating_add(1)))
            }
            (false, false) => (vec![self, other], ld.max(rd).saturating_add(1)),
        };
        if depth > MAX_CONDITION_DEPTH {
            Node::TooDeep
        } else if and {
            Node::And(operands, depth)
        } else {
            Node::Or(operands, depth)
        }
    }

    /// `NOT self`.
    pub(crate) fn negate(self) -> Node {
        let depth = self.depth().saturating_add(1);
        if matches!(self, Node::TooDeep) || depth > MAX_CONDITION_DEPTH {
            Node::TooDeep
        } else {
            Node::Not(Box::new(self), depth)
        }
    }

    fn into_operands(self) -> Vec<Node> {
        match self {
            Node::And(operands, _) | Node::Or(operands, _) => operands,
            other => vec![other],
        }
    }
}

/// The operands rendered, each in parentheses, joined by `op`.
fn join(b: &mut ExprBuilder, operands: &[Node], op: &str) -> Result<String, Error> {
    let mut out = String::new();
    for (i, operand) in operands.iter().enumerate() {
        if i > 0 {
            out.push_str(op);
        }
        out.push('(');
        out.push_str(&operand.render(b)?);
        out.push(')');
    }
    Ok(out)
}

/// A condition on an item of entity `E`, built from its typed attributes and combined with
/// `&`, `|` and `!` (or [`and`](Condition::and), [`or`](Condition::or),
/// [`not`](Condition::not)).
///
/// ```
/// # use ddb_model::{Attr, Condition};
/// # struct User;
/// # const AGE: Attr<User, u32> = Attr::new("age");
/// # const NICK: Attr<User, Option<String>> = Attr::new("nick");
/// let adult_without_nick: Condition<User> = AGE.ge(18) & NICK.not_exists();
/// ```
pub struct Condition<E> {
    node: Node,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Condition<E> {
    pub(crate) fn from_node(node: Node) -> Self {
        Condition { node, _entity: PhantomData }
    }

    pub(crate) fn into_node(self) -> Node {
        self.node
    }

    /// Both conditions hold.
    pub fn and(self, other: Condition<E>) -> Condition<E> {
        Condition::from_node(self.node.combine(other.node, true))
    }

    /// Either condition holds.
    pub fn or(self, other: Condition<E>) -> Condition<E> {
        Condition::from_node(self.node.combine(other.node, false))
    }

    /// The condition does not hold.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Condition<E> {
        Condition::from_node(self.node.negate())
    }
}

impl<E> Clone for Condition<E> {
    fn clone(&self) -> Self {
        Condition::from_node(self.node.clone())
    }
}

impl<E> fmt::Debug for Condition<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.node, f)
    }
}

impl<E> std::ops::BitAnd for Condition<E> {
    type Output = Condition<E>;
    fn bitand(self, rhs: Condition<E>) -> Condition<E> {
        self.and(rhs)
    }
}

impl<E> std::ops::BitOr for Condition<E> {
    type Output = Condition<E>;
    fn bitor(self, rhs: Condition<E>) -> Condition<E> {
        self.or(rhs)
    }
}

impl<E> std::ops::Not for Condition<E> {
    type Output = Condition<E>;
    fn not(self) -> Condition<E> {
        Condition::not(self)
    }
}

/// `size(path)` of an attribute, to compare with a number. Made with `.size()` on an
/// attribute.
pub struct SizeOf<E> {
    path: Path,
    _entity: PhantomData<fn() -> E>,
}

/// The comparison methods, written once for sizes and attributes: `$name(&self, $v: $arg)`
/// is the condition `$node` built from `$s` (`self`) and `$c` (the method's `Cmp`).
macro_rules! cmp_methods {
    (|$s:ident, $v:ident: $arg:ty, $c:ident| $node:expr;
     $($(#[$doc:meta])* $name:ident => $cmp:ident),*) => {$(
        $(#[$doc])*
        pub fn $name(&self, $v: $arg) -> Condition<E> {
            let ($s, $c) = (self, Cmp::$cmp);
            Condition::from_node($node)
        }
    )*};
}

impl<E> SizeOf<E> {
    cmp_methods!(
        |s, n: u64, cmp| {
            let v = Operand::checked(&s.path, AttributeValue::N(n.to_string()));
            Node::Size(s.path.clone(), cmp, v)
        };
        /// `size(path) = n`.
        eq => Eq,
        /// `size(path) <> n`.
        ne => Ne,
        /// `size(path) < n`.
        lt => Lt,
        /// `size(path) <= n`.
        le => Le,
        /// `size(path) > n`.
        gt => Gt,
        /// `size(path) >= n`.
        ge => Ge
    );
}

macro_rules! condition_methods {
    ($ty:ident) => {
        impl<E, T, A> $ty<E, T, A> {
            cmp_methods!(
                |s, value: impl ValueArg<T>, cmp| {
                    let path = s.path();
                    let v = Operand::from_arg(&path, &value);
                    Node::Compare(path, cmp, v)
                };
                /// The attribute equals `value`.
                eq => Eq,
                /// The attribute differs from `value` (or is absent).
                ne => Ne,
                /// The attribute is less than `value`.
                lt => Lt,
                /// The attribute is at most `value`.
                le => Le,
                /// The attribute is greater than `value`.
                gt => Gt,
                /// The attribute is at least `value`.
                ge => Ge
            );

            /// `low <= attribute <= high`.
            pub fn between(&self, low: impl ValueArg<T>, high: impl ValueArg<T>) -> Condition<E> {
                let path = self.path();
                let (lo, hi) = (Operand::from_arg(&path, &low), Operand::from_arg(&path, &high));
                Condition::from_node(Node::Between(path, lo, hi))
            }

            /// The attribute equals one of `values` (1 to 100 values).
            pub fn is_in<V: ValueArg<T>>(&self, values: impl IntoIterator<Item = V>) -> Condition<E> {
                let path = self.path();
                let operands = values.into_iter().map(|v| Operand::from_arg(&path, &v)).collect();
                Condition::from_node(Node::In(path, operands))
            }

            /// The attribute is present.
            pub fn exists(&self) -> Condition<E> {
                Condition::from_node(Node::Exists(self.path()))
            }

            /// The attribute is absent.
            pub fn not_exists(&self) -> Condition<E> {
                Condition::from_node(Node::NotExists(self.path()))
            }

            /// The attribute has DynamoDB type `t`.
            pub fn is_type(&self, t: AttrType) -> Condition<E> {
                Condition::from_node(Node::Type(self.path(), t))
            }

            /// The (string) attribute starts with `prefix`.
            pub fn begins_with(&self, prefix: &str) -> Condition<E> {
                let path = self.path();
                let v = Operand::checked(&path, AttributeValue::S(prefix.to_owned()));
                Condition::from_node(Node::BeginsWith(path, v))
            }

            /// The attribute contains `value`: a substring of a string, an element of a list
            /// or set.
            pub fn contains<V: Serialize + ?Sized>(&self, value: &V) -> Condition<E> {
                let path = self.path();
                let v = Operand::serialize(&path, value);
                Condition::from_node(Node::Contains(path, v))
            }

            /// `size(attribute)`: string or binary length, number of elements of a list, map
            /// or set.
            pub fn size(&self) -> SizeOf<E> {
                SizeOf { path: self.path(), _entity: PhantomData }
            }
        }
    };
}

condition_methods!(Attr);
condition_methods!(MapEntry);
condition_methods!(AttrPath);

#[cfg(test)]
mod tests {
    use super::*;

    struct User;
    const AGE: Attr<User, u32> = Attr::new("age");
    const NAME: Attr<User, String> = Attr::new("name");
    const NICK: Attr<User, Option<String>> = Attr::new("nick");

    fn render(c: Condition<User>) -> (String, ExprBuilder) {
        let mut b = ExprBuilder::default();
        let s = c.into_node().render(&mut b).unwrap();
        (s, b)
    }

    fn try_render(c: Condition<User>) -> Result<String, Error> {
        c.into_node().render(&mut ExprBuilder::default())
    }

    #[test]
    fn renders_with_placeholders_only() {
        let (s, b) =
            render((AGE.ge(18) & NAME.begins_with("a#b")) | !NICK.eq("x") | AGE.size().gt(3));
        assert_eq!(
            s,
            "((#n0 >= :v0) AND (begins_with(#n1, :v1))) OR (NOT (#n2 = :v2)) OR (size(#n0) > :v3)"
        );
        let (names, values) = b.finish();
        assert_eq!(names.unwrap().len(), 3, "names are deduplicated");
        let values = values.unwrap();
        assert_eq!(values[":v0"], AttributeValue::N("18".into()));
        assert_eq!(values[":v1"], AttributeValue::S("a#b".into()));
    }

    #[test]
    fn long_chains_stay_flat_and_deep_nesting_is_an_error() {
        // A chain built in a loop is one level, however long (it used to overflow the stack
        // while rendering).
        let chain = (0..5_000u32).fold(AGE.eq(0), |c, i| c | AGE.eq(i));
        assert!(matches!(&chain.node, Node::Or(v, 1) if v.len() == 5_001));
        assert!(try_render(chain).is_ok());
        // Alternating operators nest; past the limit the condition is a typed error.
        let mut c = AGE.eq(0);
        for i in 0..200u32 {
            c = if i % 2 == 0 { c & AGE.eq(i) } else { !(c | AGE.eq(i)) };
        }
        let err = try_render(c).unwrap_err();
        assert!(err.to_string().contains("levels deep"), "{err}");
        let ok = (0..(MAX_CONDITION_DEPTH as u32 - 1)).fold(AGE.eq(0), |c, i| !(c & AGE.eq(i)));
        assert!(try_render(ok).is_err(), "each step adds two levels");
        let ok = (0..(MAX_CONDITION_DEPTH as u32 / 2)).fold(AGE.eq(0), |c, i| !(c & AGE.eq(i)));
        assert!(try_render(ok).is_ok());
    }

    #[test]
    fn in_checks_its_bounds() {
        assert!(try_render(AGE.is_in(Vec::<u32>::new())).is_err());
        assert!(try_render(AGE.is_in(0..101u32)).is_err());
        assert!(try_render(AGE.is_in(0..100u32)).is_ok());
    }
}
