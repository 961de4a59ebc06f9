//! [`TreePath`]: the position of a node in a tree, as a list of segments (public as
//! `ddb_model::TreePath` and `ddb_model::tree::TreePath`).
//!
//! It lives beside the errors because [`TreeProblem`](super::TreeProblem) carries paths; its
//! [`KeyPart`](crate::KeyPart) impl is in `key::part`, with the other key parts.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::escape::{escape_into, unescape};

/// The separator between segments in a path's text.
pub const PATH_SEPARATOR: char = '/';

/// The deepest path a [`TreePath`] may have unless a hierarchy sets a lower limit.
pub const MAX_PATH_DEPTH: usize = 128;

/// What is wrong with a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathProblem {
    /// A node path needs at least one segment.
    #[error("a node path needs at least one segment")]
    Empty,
    /// Segment `index` (from 0) is the empty string.
    #[error("segment {index} is empty")]
    EmptySegment {
        /// The segment's position.
        index: usize,
    },
    /// The path is deeper than allowed.
    #[error("the path is {depth} segments deep; the limit is {max}")]
    TooDeep {
        /// Its depth.
        depth: usize,
        /// The limit.
        max: usize,
    },
    /// The text is not a path's text (a bad `%` escape).
    #[error("malformed path text: {reason}")]
    Malformed {
        /// The escape that is wrong, in the segment.
        reason: crate::escape::UnescapeError,
    },
}

/// The path of a tree node: its segments from the root, one per level (`["Drive D", "V",
/// "d"]`). Every segment is non-empty; a segment may hold any character, including the
/// separator (a folder may be called `a/b`).
///
/// Its text form ([`Display`](fmt::Display), [`FromStr`], serde, and the key text) escapes
/// `%` and the key separators inside each segment and joins the segments with `/`, so the
/// text of a path is a prefix of the text of its descendants, and of nothing else once a `/`
/// is appended.
///
/// ```
/// use ddb_model::TreePath;
///
/// let d = TreePath::new(["Drive D", "V", "d"]).unwrap();
/// assert_eq!(d.to_string(), "Drive D/V/d");
/// assert_eq!(d.depth(), 3);
/// assert_eq!(d.name(), "d");
/// assert_eq!(d.parent().unwrap().to_string(), "Drive D/V");
///
/// // A separator inside a segment is escaped and round-trips.
/// let odd = TreePath::new(["a/b", "c"]).unwrap();
/// assert_eq!(odd.to_string(), "a%2Fb/c");
/// assert_eq!("a%2Fb/c".parse::<TreePath>().unwrap(), odd);
/// assert_eq!(odd.segments()[0], "a/b");
///
/// // No empty segment, no empty path.
/// assert!(TreePath::new(["a", ""]).is_err());
/// assert!("a//b".parse::<TreePath>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TreePath {
    segments: Vec<String>,
}

impl TreePath {
    /// A path of `segments`, root first; at most [`MAX_PATH_DEPTH`] deep.
    pub fn new<S: Into<String>>(
        segments: impl IntoIterator<Item = S>,
    ) -> Result<Self, PathProblem> {
        let segments: Vec<String> = segments.into_iter().map(Into::into).collect();
        Self::check(&segments, MAX_PATH_DEPTH)?;
        Ok(TreePath { segments })
    }

    /// A root node's path: one segment.
    pub fn root(name: impl Into<String>) -> Result<Self, PathProblem> {
        Self::new([name.into()])
    }

    fn check(segments: &[String], max: usize) -> Result<(), PathProblem> {
        if segments.is_empty() {
            return Err(PathProblem::Empty);
        }
        if let Some(index) = segments.iter().position(String::is_empty) {
            return Err(PathProblem::EmptySegment { index });
        }
        if segments.len() > max {
            return Err(PathProblem::TooDeep { depth: segments.len(), max });
        }
        Ok(())
    }

    /// Checks the path against a depth limit lower than [`MAX_PATH_DEPTH`].
    pub fn check_depth(&self, max: usize) -> Result<(), PathProblem> {
        Self::check(&self.segments, max.min(MAX_PATH_DEPTH))
    }

    /// The path of the child `name` of this node.
    pub fn child(&self, name: impl Into<String>) -> Result<Self, PathProblem> {
        let mut segments = self.segments.clone();
        segments.push(name.into());
        Self::check(&segments, MAX_PATH_DEPTH)?;
        Ok(TreePath { segments })
    }

    /// The parent's path; `None` for a root node.
    pub fn parent(&self) -> Option<TreePath> {
        (self.segments.len() > 1)
            .then(|| TreePath { segments: self.segments[..self.segments.len() - 1].to_vec() })
    }

    /// The segments, root first.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The last segment: the node's own name.
    pub fn name(&self) -> &str {
        self.segments.last().map_or("", String::as_str)
    }

    /// The number of segments (a root node has depth 1).
    pub fn depth(&self) -> usize {
        self.segments.len()
    }

    /// The paths of the ancestors, root first, without this path.
    pub fn ancestors(&self) -> impl DoubleEndedIterator<Item = TreePath> + '_ {
        (1..self.segments.len()).map(|n| TreePath { segments: self.segments[..n].to_vec() })
    }

    /// True when `self` is `other` or one of its ancestors.
    pub fn contains(&self, other: &TreePath) -> bool {
        other.segments.starts_with(&self.segments)
    }

    /// True when `self` is a proper ancestor of `other`.
    pub fn is_ancestor_of(&self, other: &TreePath) -> bool {
        self.segments.len() < other.segments.len() && self.contains(other)
    }

    /// The path `self` would have after the subtree at `from` moves to `to`; `None` when
    /// `self` is not in that subtree.
    pub fn rebase(&self, from: &TreePath, to: &TreePath) -> Option<Result<TreePath, PathProblem>> {
        let rest = self.segments.strip_prefix(from.segments.as_slice())?;
        let segments: Vec<String> = to.segments.iter().chain(rest).cloned().collect();
        Some(Self::check(&segments, MAX_PATH_DEPTH).map(|()| TreePath { segments }))
    }

    /// The text form: escaped segments joined by `/`.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.segments.iter().map(|s| s.len() + 1).sum());
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 {
                out.push(PATH_SEPARATOR);
            }
            escape_into(segment, &mut out);
        }
        out
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<TreePath, PathProblem> {
        if text.is_empty() {
            return Err(PathProblem::Empty);
        }
        let segments = text
            .split(PATH_SEPARATOR)
            .map(|raw| {
                unescape(raw).map(Cow::into_owned).map_err(|e| PathProblem::Malformed { reason: e })
            })
            .collect::<Result<Vec<_>, _>>()?;
        TreePath::new(segments)
    }
}

impl fmt::Display for TreePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl fmt::Debug for TreePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TreePath({:?})", self.to_text())
    }
}

impl FromStr for TreePath {
    type Err = PathProblem;
    fn from_str(s: &str) -> Result<Self, PathProblem> {
        TreePath::parse(s)
    }
}

impl Serialize for TreePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_text())
    }
}

impl<'de> Deserialize<'de> for TreePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        TreePath::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::key::KeyPart;

    fn segment() -> impl Strategy<Value = String> {
        prop::string::string_regex("[a-z/#%: ~|]{1,6}").expect("valid regex")
    }

    proptest! {
        #[test]
        fn text_round_trips(segments in prop::collection::vec(segment(), 1..6)) {
            let path = TreePath::new(segments.clone()).unwrap();
            prop_assert_eq!(path.segments(), segments.as_slice());
            prop_assert_eq!(TreePath::parse(&path.to_text()).unwrap(), path.clone());
            let key = path.key_text();
            prop_assert_eq!(TreePath::from_key_text(&key).unwrap(), path);
        }

        /// The text of `a` plus `/` is a prefix of the text of `b` exactly when `a` is a
        /// proper ancestor of `b`: subtree queries by prefix are exact.
        #[test]
        fn prefixes_are_subtrees(
            a in prop::collection::vec(segment(), 1..4),
            b in prop::collection::vec(segment(), 1..5),
        ) {
            let (a, b) = (TreePath::new(a).unwrap(), TreePath::new(b).unwrap());
            let prefix = format!("{}/", a.to_text());
            prop_assert_eq!(b.to_text().starts_with(&prefix), a.is_ancestor_of(&b));
        }
    }

    #[test]
    fn navigation() {
        let p = TreePath::new(["D", "V", "d"]).unwrap();
        let ancestors: Vec<String> = p.ancestors().map(|a| a.to_string()).collect();
        assert_eq!(ancestors, ["D", "D/V"]);
        assert!(TreePath::root("D").unwrap().is_ancestor_of(&p));
        assert!(!p.is_ancestor_of(&p));
        assert!(p.contains(&p));
        let moved = p
            .rebase(&TreePath::new(["D", "V"]).unwrap(), &TreePath::new(["C", "X"]).unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(moved.to_string(), "C/X/d");
        assert!(p.rebase(&TreePath::root("C").unwrap(), &TreePath::root("E").unwrap()).is_none());
        assert_eq!(TreePath::root("C").unwrap().parent(), None);
    }

    #[test]
    fn limits() {
        assert_eq!(TreePath::new(Vec::<String>::new()), Err(PathProblem::Empty));
        assert_eq!(TreePath::new(["a", ""]), Err(PathProblem::EmptySegment { index: 1 }));
        let deep = TreePath::new((0..10).map(|i| i.to_string())).unwrap();
        assert_eq!(deep.check_depth(5), Err(PathProblem::TooDeep { depth: 10, max: 5 }));
        assert!(TreePath::new((0..=MAX_PATH_DEPTH).map(|i| i.to_string())).is_err());
        let bad = crate::escape::UnescapeError { offset: 0, found: '%' };
        assert_eq!(TreePath::parse("a/%zz"), Err(PathProblem::Malformed { reason: bad }));
        assert_eq!(TreePath::parse(""), Err(PathProblem::Empty));
    }
}
