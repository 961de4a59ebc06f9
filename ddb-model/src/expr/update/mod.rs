//! Typed update actions: [`UpdateActions`], the `SET`, `REMOVE`, `ADD` and `DELETE` actions
//! of one update on typed attribute paths, and what the layers above ask of them (the
//! attributes they touch, the values a created item gets).

mod marked;
mod render;
mod set;

use std::fmt;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

use crate::error::{Error, RequestProblem};
use crate::expr::{Operand, Path, PathSegment, RemovePath, UpdatePath, ValueArg};

pub(crate) use marked::Marked;
pub use set::SetField;
use set::set_operand;

/// A number type `ADD` can add to (and `Option`s of them: `ADD` treats an absent attribute
/// as 0).
#[diagnostic::on_unimplemented(
    message = "`add` needs a number attribute, not `{Self}`",
    label = "use `set` for other types, `append` for lists"
)]
pub trait Numeric {}

macro_rules! numeric {
    ($($t:ty),*) => {$( impl Numeric for $t {} )*};
}
numeric!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
impl<T: Numeric> Numeric for Option<T> {}

#[derive(Debug, Clone, PartialEq)]
enum SetRhs {
    Value(Operand),
    IfNotExists(Operand),
    Append(Operand),
}

impl SetRhs {
    fn operand(&self) -> &Operand {
        let (SetRhs::Value(v) | SetRhs::IfNotExists(v) | SetRhs::Append(v)) = self;
        v
    }
}

/// The changes of one update of entity `E`: `SET`, `REMOVE` and `ADD` actions on typed
/// attribute paths. Key fields and the version field are read-only: changing them does not
/// compile.
///
/// Usually built through the update builder (`User::update(&db, id).set(..)`), which holds
/// one of these.
pub struct UpdateActions<E> {
    l: Actions,
    _entity: PhantomData<fn() -> E>,
}

/// The actions of an [`UpdateActions`], by clause.
#[derive(Default, Clone, Debug)]
struct Actions {
    set: Vec<(Path, SetRhs)>,
    remove: Vec<Path>,
    add: Vec<(Path, Operand)>,
    /// `ADD path :set` (set elements; idempotent).
    add_set: Vec<(Path, Operand)>,
    /// `DELETE path :set` (idempotent).
    delete_set: Vec<(Path, Operand)>,
}

impl<E> Default for UpdateActions<E> {
    fn default() -> Self {
        Actions::default().into()
    }
}

impl<E> Clone for UpdateActions<E> {
    fn clone(&self) -> Self {
        self.l.clone().into()
    }
}

impl<E> fmt::Debug for UpdateActions<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.l.fmt(f)
    }
}

impl<E> From<Actions> for UpdateActions<E> {
    fn from(l: Actions) -> Self {
        UpdateActions { l, _entity: PhantomData }
    }
}

impl<E> UpdateActions<E> {
    /// No actions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the actions of `other`.
    pub fn merge(mut self, other: UpdateActions<E>) -> Self {
        self.l.set.extend(other.l.set);
        self.l.remove.extend(other.l.remove);
        self.l.add.extend(other.l.add);
        self.l.add_set.extend(other.l.add_set);
        self.l.delete_set.extend(other.l.delete_set);
        self
    }

    /// True when there are no actions.
    pub fn is_empty(&self) -> bool {
        self.paths().next().is_none()
    }

    /// True when applying the actions twice has the same effect as once (no `add`, no
    /// `append`; set elements added or deleted are idempotent).
    pub fn is_idempotent(&self) -> bool {
        self.l.add.is_empty() && !self.l.set.iter().any(|(_, rhs)| matches!(rhs, SetRhs::Append(_)))
    }

    fn paths(&self) -> impl Iterator<Item = &Path> {
        let valued = self.l.add.iter().chain(&self.l.add_set).chain(&self.l.delete_set);
        let set = self.l.set.iter().map(|(p, _)| p);
        set.chain(&self.l.remove).chain(valued.map(|(p, _)| p))
    }
}

/// The update verbs (`set`, `remove`, `add`, `append`, the set actions), written once and
/// shared by every builder of an update: [`UpdateActions`],
/// [`Update`](crate::ops::Update), [`EdgeUpdate`](crate::edge::EdgeUpdate) and
/// [`ClosureUpdate`](crate::tree::ClosureUpdate). It is in the [prelude](crate::prelude).
///
/// Each verb adds an action to the update and returns the builder, so they chain:
/// `User::update(&db, "ann").set(User::NAME, "Ann").add(User::LOGINS, 1)`. Paths are typed:
/// a key field or the version field has no writable path, so changing one does not compile.
pub trait UpdateVerbs<E>: Sized {
    /// The actions the builder holds (what the verbs add to).
    #[doc(hidden)]
    fn update_actions(&mut self) -> &mut UpdateActions<E>;

    /// `SET path = value`; for a `None`, `REMOVE path`: a `None` is stored as no attribute
    /// (or map member), as a put stores it, unless the field is `#[entity(none_as_null)]`
    /// (or its table `#[table(none_as_null)]`), where it is `SET path = NULL`. Inside the
    /// value, members holding `None` are left out the same way; list elements keep theirs as
    /// `NULL`.
    fn set<T>(mut self, path: impl UpdatePath<E, T>, value: impl ValueArg<T>) -> Self {
        let path = path.update_path();
        let actions = &mut self.update_actions().l;
        match Operand::written(&path, &value) {
            Some(v) => actions.set.push((path, SetRhs::Value(v))),
            None => actions.remove.push(path),
        }
        self
    }

    /// `SET path = if_not_exists(path, value)`: sets the attribute only when it is absent.
    /// A `None` (left out, as [`set`](UpdateVerbs::set) leaves it) adds no action: an absent
    /// attribute already reads as `None`, and a present one is kept.
    fn set_if_not_exists<T>(
        mut self,
        path: impl UpdatePath<E, T>,
        value: impl ValueArg<T>,
    ) -> Self {
        let path = path.update_path();
        if let Some(v) = Operand::written(&path, &value) {
            self.update_actions().l.set.push((path, SetRhs::IfNotExists(v)));
        }
        self
    }

    /// `REMOVE path`, for `Option` attributes (which read back as `None`).
    fn remove(mut self, path: impl RemovePath<E>) -> Self {
        self.update_actions().l.remove.push(path.remove_path());
        self
    }

    /// `ADD path value`: adds a number (an absent attribute counts as 0).
    ///
    /// Not idempotent, so the update is made safe to send again (a marker attribute, or a
    /// transaction with an idempotency token; see [`Update`](crate::ops::Update)): an SDK
    /// retry after a lost response cannot add twice.
    fn add<T: Numeric>(mut self, path: impl UpdatePath<E, T>, value: impl ValueArg<T>) -> Self {
        let path = path.update_path();
        let v = Operand::from_arg(&path, &value);
        self.update_actions().l.add.push((path, v));
        self
    }

    /// Appends `items` to a list attribute (an absent list counts as empty).
    ///
    /// Not idempotent, so the update is made safe to send again, like [`add`](UpdateVerbs::add).
    fn append<T: Serialize>(
        mut self,
        path: impl UpdatePath<E, Vec<T>>,
        items: impl IntoIterator<Item = T>,
    ) -> Self {
        let path = path.update_path();
        let items: Vec<T> = items.into_iter().collect();
        let v = Operand::serialize(&path, &items);
        self.update_actions().l.set.push((path, SetRhs::Append(v)));
        self
    }

    /// `ADD path :elements`: adds elements to a set attribute (see [`crate::set`] for how a
    /// set field is stored). An absent attribute becomes a set of `elements`; elements
    /// already present stay once. String, number and binary sets; the elements must not be
    /// empty ([`RequestProblem::EmptySet`], nothing sent).
    ///
    /// Idempotent by nature (adding an element twice leaves it once), so unlike
    /// [`add`](UpdateVerbs::add) it needs no marker or transaction.
    ///
    /// ```
    /// # use std::collections::HashSet;
    /// # use ddb_model::{Attr, UpdateActions, UpdateVerbs};
    /// # struct User;
    /// # const TAGS: Attr<User, HashSet<String>> = Attr::new("tags");
    /// let actions = UpdateActions::<User>::new().add_to_set(TAGS, ["admin", "ops"]);
    /// # assert!(actions.is_idempotent());
    /// ```
    fn add_to_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let v = set_operand(&path, elements);
        self.update_actions().l.add_set.push((path, v));
        self
    }

    /// `DELETE path :elements`: removes elements from a set attribute. Elements that are not
    /// in the set and an absent attribute are no error; removing the last element removes
    /// the attribute (a `#[serde(default, with = "ddb_model::set")]` field reads it back as
    /// an empty set). The elements must not be empty ([`RequestProblem::EmptySet`]).
    /// Idempotent.
    fn delete_from_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let v = set_operand(&path, elements);
        self.update_actions().l.delete_set.push((path, v));
        self
    }

    /// Replaces a whole set attribute by `elements`, stored as a DynamoDB set (`SET path =
    /// :elements`); no elements removes the attribute, which a `#[serde(default, with =
    /// "ddb_model::set")]` field reads back as an empty set. (`set` would write the set as a
    /// list, which is not how such a field is stored.)
    fn replace_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let mut elements = elements.into_iter().peekable();
        if elements.peek().is_none() {
            self.update_actions().l.remove.push(path);
        } else {
            let v = set_operand(&path, elements);
            self.update_actions().l.set.push((path, SetRhs::Value(v)));
        }
        self
    }

    /// Adds every action of `actions` (prepared elsewhere, for example by a function that
    /// several updates share).
    fn actions(mut self, actions: UpdateActions<E>) -> Self {
        let mine = std::mem::take(self.update_actions());
        *self.update_actions() = mine.merge(actions);
        self
    }
}

impl<E> UpdateVerbs<E> for UpdateActions<E> {
    fn update_actions(&mut self) -> &mut UpdateActions<E> {
        self
    }
}

/// What an update does to one top-level attribute (for the index keys it feeds).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Touch<'a> {
    /// No action names it.
    Untouched,
    /// `SET attr = value`: the new value is known.
    Set(&'a AttributeValue),
    /// `REMOVE attr`.
    Removed,
    /// Written by an action whose result depends on the stored item (`set_if_not_exists`,
    /// `add`, `append`, set elements, a nested path).
    Computed,
}

// For the index keys an update recomputes (`crate::model::Entity::index_key_updates`).
impl<E> UpdateActions<E> {
    /// What the actions do to the top-level attribute `attr`. A value that failed its checks
    /// counts as untouched: rendering the update reports it.
    pub fn touch(&self, attr: &str) -> Touch<'_> {
        let at = |path: &Path| matches!(path.segments().first(), Some(PathSegment::Name(n)) if n == attr);
        let whole = |path: &Path| path.segments().len() == 1;
        for (path, rhs) in &self.l.set {
            if !at(path) {
                continue;
            }
            return match rhs {
                SetRhs::Value(Operand::Value(v, _)) if whole(path) => Touch::Set(v),
                SetRhs::Value(Operand::Invalid(_)) => Touch::Untouched,
                _ => Touch::Computed,
            };
        }
        if let Some(path) = self.l.remove.iter().find(|p| at(p)) {
            return if whole(path) { Touch::Removed } else { Touch::Computed };
        }
        let computed = self.l.add.iter().chain(&self.l.add_set).chain(&self.l.delete_set);
        if computed.map(|(p, _)| p).any(at) {
            return Touch::Computed;
        }
        Touch::Untouched
    }

    /// What the actions write, as values to place on the stored item: `(path, Some(value),
    /// if_absent)` for a `SET` (only where the path is absent when `if_absent`), `(path,
    /// None, false)` for a `REMOVE`. `None` when an action's result depends on more than
    /// the stored value at its path (`add`, `append`, set elements) or a value failed its
    /// checks.
    pub(crate) fn plain_writes(&self) -> Option<Vec<(Path, Option<AttributeValue>, bool)>> {
        if !self.l.add.is_empty() || !self.l.add_set.is_empty() || !self.l.delete_set.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(self.l.set.len() + self.l.remove.len());
        for (path, rhs) in &self.l.set {
            match rhs {
                SetRhs::Value(Operand::Value(v, _)) => {
                    out.push((path.clone(), Some(v.clone()), false))
                }
                SetRhs::IfNotExists(Operand::Value(v, _)) => {
                    out.push((path.clone(), Some(v.clone()), true))
                }
                _ => return None,
            }
        }
        out.extend(self.l.remove.iter().map(|p| (p.clone(), None, false)));
        Some(out)
    }

    /// The actions without the `set_if_not_exists` ones (what an upsert changes on an
    /// existing item whatever it holds).
    pub(crate) fn without_if_not_exists(&self) -> UpdateActions<E> {
        let set = self.l.set.iter().filter(|(_, rhs)| !matches!(rhs, SetRhs::IfNotExists(_)));
        Actions { set: set.cloned().collect(), ..self.l.clone() }.into()
    }

    /// `REMOVE name` for an attribute the library writes (an index key the update takes the
    /// item out of).
    pub(crate) fn remove_raw(mut self, name: &str) -> Self {
        self.l.remove.push(Path::attr(name.to_owned()));
        self
    }
}

// For upserts (`crate::ops::update`): an update that may create the item.
impl<E> UpdateActions<E> {
    /// The attributes an item created by these actions holds (each top-level path with the
    /// value it gets from an absent attribute: `set` and `set_if_not_exists` their value,
    /// `add` its number, `append` its list, `add_to_set` its set; `remove` and
    /// `delete_from_set` leave nothing). A nested path cannot be written to an item being
    /// created (its parent is absent): refused.
    pub(crate) fn created_values(&self) -> Result<Vec<(String, AttributeValue)>, Error> {
        let top = |path: &Path| match path.segments() {
            [PathSegment::Name(name)] => Ok(name.to_string()),
            _ => Err(Error::InvalidRequest {
                path: path.to_string(),
                problem: RequestProblem::NestedPathInUpsert,
            }),
        };
        // An invalid value is reported with its own error when the update is rendered.
        let value = |v: &Operand| match v {
            Operand::Value(v, _) => Some(v.clone()),
            Operand::Invalid(_) => None,
        };
        let mut out = Vec::new();
        let set = self.l.set.iter().map(|(path, rhs)| (path, rhs.operand()));
        let added = self.l.add.iter().chain(&self.l.add_set).map(|(path, v)| (path, v));
        for (path, v) in set.chain(added) {
            let name = top(path)?;
            if let Some(v) = value(v) {
                out.push((name, v));
            }
        }
        for path in self.l.remove.iter().chain(self.l.delete_set.iter().map(|(p, _)| p)) {
            top(path)?;
        }
        Ok(out)
    }

    /// `SET name = value` for an attribute the library writes (the entity type and key fields
    /// of an upsert).
    pub(crate) fn set_raw(mut self, name: &str, value: AttributeValue) -> Self {
        let path = Path::attr(name.to_owned());
        let v = Operand::checked(&path, value);
        self.l.set.push((path, SetRhs::Value(v)));
        self
    }

    /// `SET name = if_not_exists(name, value)` for an attribute the library writes (the index
    /// keys of an item an upsert creates).
    pub(crate) fn set_raw_if_not_exists(mut self, name: &str, value: AttributeValue) -> Self {
        let path = Path::attr(name.to_owned());
        let v = Operand::checked(&path, value);
        self.l.set.push((path, SetRhs::IfNotExists(v)));
        self
    }
}

// For the graph layer (`crate::edge`): an inverse edge item keeps only some of the edge's
// fields, so an update of both sides sends it only the actions on those.
impl<E> UpdateActions<E> {
    /// The actions whose path `keep` accepts.
    pub(crate) fn retain_paths(&self, keep: impl Fn(&Path) -> bool) -> UpdateActions<E> {
        let kept = |v: &[(Path, Operand)]| v.iter().filter(|(p, _)| keep(p)).cloned().collect();
        Actions {
            set: self.l.set.iter().filter(|(p, _)| keep(p)).cloned().collect(),
            remove: self.l.remove.iter().filter(|p| keep(p)).cloned().collect(),
            add: kept(&self.l.add),
            add_set: kept(&self.l.add_set),
            delete_set: kept(&self.l.delete_set),
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Attr, ExprBuilder, ReadOnly};

    struct User;
    const EMAIL: Attr<User, String> = Attr::new("email");
    const LOGINS: Attr<User, u64> = Attr::new("logins");
    const TAGS: Attr<User, Vec<String>> = Attr::new("tags");
    const NICK: Attr<User, Option<String>> = Attr::new("nick");
    const NICK_MAP: Attr<User, Option<std::collections::BTreeMap<String, Option<u8>>>> =
        Attr::new("nick_map");
    const LIST: Attr<User, Vec<Option<u8>>> = Attr::new("list");
    #[allow(dead_code)]
    const ID: Attr<User, String, ReadOnly> = Attr::new("id");

    /// One action of each kind.
    fn every_kind() -> UpdateActions<User> {
        UpdateActions::<User>::new()
            .set(EMAIL, "a@b")
            .add(LOGINS, 1)
            .append(TAGS, ["x".to_string()])
            .remove(NICK)
    }

    #[test]
    fn renders_all_clauses() {
        let u = every_kind();
        assert!(!u.is_idempotent());
        let mut b = ExprBuilder::default();
        let s = u.render(&mut b, Some("version")).unwrap();
        assert_eq!(
            s,
            "SET #n0 = :v0, #n1 = list_append(if_not_exists(#n1, :v1), :v2), \
             #n2 = if_not_exists(#n2, :v3) + :v4 REMOVE #n3 ADD #n4 :v5"
        );
    }

    #[test]
    fn marked_updates_write_each_computed_value_to_a_marker_too() {
        let u = every_kind();
        let mut b = ExprBuilder::default();
        let m = u.render_marked(&mut b, Some("version"), "_ddbm.1.t").unwrap();
        assert_eq!(
            m.expression,
            "SET #n1 = list_append(if_not_exists(#n1, :v1), :v2), \
             #n2 = list_append(if_not_exists(#n1, :v1), :v2), \
             #n3 = if_not_exists(#n3, :v3) + :v4, #n4 = if_not_exists(#n3, :v3) + :v4, \
             #n5 = if_not_exists(#n5, :v5) + :v6, #n6 = if_not_exists(#n5, :v5) + :v6, \
             #n0 = :v0 REMOVE #n7"
        );
        assert_eq!(m.detect, "#n2");
        assert_eq!(m.markers, ["_ddbm.1.t.0", "_ddbm.1.t.1", "_ddbm.1.t.2"]);
        let computed: Vec<String> = m.computed.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(computed, ["tags", "logins", "version"]);
        assert_eq!(m.plain.len(), 1);
        assert_eq!(m.removed.len(), 1);
        let (names, _) = b.finish();
        assert_eq!(names.unwrap()["#n2"], "_ddbm.1.t.0");
        // Overlapping paths are refused as by `render`.
        let u = UpdateActions::<User>::new().add(LOGINS, 1).add(LOGINS, 2);
        assert!(u.render_marked(&mut ExprBuilder::default(), None, "m").is_err());
    }

    proptest::proptest! {
        /// Any elements: refused before sending when empty, else one set without duplicates
        /// holding exactly the distinct elements.
        #[test]
        fn set_elements_render_as_one_set_of_the_distinct_elements(
            elements in proptest::collection::vec(".{0,3}", 0..8),
        ) {
            const SET: Attr<User, std::collections::HashSet<String>> = Attr::new("set");
            let u = UpdateActions::<User>::new().add_to_set(SET, elements.clone());
            proptest::prop_assert!(u.is_idempotent());
            let mut b = ExprBuilder::default();
            match u.render(&mut b, None) {
                Err(Error::InvalidRequest { problem: RequestProblem::EmptySet, .. }) => {
                    proptest::prop_assert!(elements.is_empty())
                }
                Ok(expr) => {
                    proptest::prop_assert_eq!(expr, "ADD #n0 :v0");
                    let (_, values) = b.finish();
                    let Some(AttributeValue::Ss(set)) = values.unwrap().remove(":v0") else {
                        return Err(proptest::test_runner::TestCaseError::fail("no SS"));
                    };
                    let distinct: std::collections::BTreeSet<&String> = elements.iter().collect();
                    proptest::prop_assert_eq!(set.len(), distinct.len());
                    proptest::prop_assert_eq!(set.iter().collect::<std::collections::BTreeSet<_>>(), distinct);
                }
                Err(other) => return Err(proptest::test_runner::TestCaseError::fail(other.to_string())),
            }
        }
    }

    #[test]
    fn a_none_set_is_a_remove_unless_the_path_keeps_null() {
        let render = |u: UpdateActions<User>| {
            let mut b = ExprBuilder::default();
            let expr = u.render(&mut b, None);
            (expr, b.finish().1)
        };
        let (expr, values) = render(
            UpdateActions::<User>::new().set(NICK, None).set(NICK_MAP.at::<Option<u8>>("x"), None),
        );
        assert_eq!(expr.unwrap(), "REMOVE #n0, #n1.#n2");
        assert_eq!(values, None);
        // A `None` inside the value is left out of its map; in a list it is `NULL`.
        let (expr, values) = render(
            UpdateActions::<User>::new()
                .set(
                    NICK_MAP,
                    Some(
                        [("a".to_owned(), None), ("b".to_owned(), Some(1u8))].into_iter().collect(),
                    ),
                )
                .set(LIST, vec![None, Some(2u8)]),
        );
        assert_eq!(expr.unwrap(), "SET #n0 = :v0, #n1 = :v1");
        let values = values.unwrap();
        let AttributeValue::M(map) = &values[":v0"] else { panic!("{values:?}") };
        assert_eq!(map.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(
            values[":v1"],
            AttributeValue::L(vec![AttributeValue::Null(true), AttributeValue::N("2".into())])
        );
        // `none_as_null`: `NULL`, inside the value too.
        let kept = NICK.none_as_null(true, false);
        let (expr, values) = render(UpdateActions::<User>::new().set(kept, None));
        assert_eq!(expr.unwrap(), "SET #n0 = :v0");
        assert_eq!(values.unwrap()[":v0"], AttributeValue::Null(true));
        // A list element, or a field that is not an `Option`: `NULL` too.
        let (element, _) = render(UpdateActions::<User>::new().set(LIST.index(1), None::<u8>));
        assert_eq!(element.unwrap(), "SET #n0[1] = :v0");
        let whole = NICK.none_as_null(false, true);
        let (expr, _) = render(UpdateActions::<User>::new().set(whole, None));
        assert_eq!(expr.unwrap(), "SET #n0 = :v0");
        // `set_if_not_exists(None)` writes nothing.
        let (expr, _) = render(UpdateActions::<User>::new().set_if_not_exists(NICK, None));
        assert!(matches!(
            expr,
            Err(Error::InvalidRequest { problem: RequestProblem::EmptyUpdate, .. })
        ));
        // Conditions compare with `NULL`.
        let c = NICK.eq(None).into_node();
        let mut b = ExprBuilder::default();
        assert_eq!(c.render(&mut b).unwrap(), "#n0 = :v0");
        assert_eq!(b.finish().1.unwrap()[":v0"], AttributeValue::Null(true));
    }

    #[test]
    fn rejects_overlapping_and_empty_updates() {
        let mut b = ExprBuilder::default();
        assert!(UpdateActions::<User>::new().render(&mut b, None).is_err());
        let u = UpdateActions::<User>::new().set(EMAIL, "a").set(EMAIL, "b");
        assert!(u.render(&mut b, None).is_err());
        let nested =
            UpdateActions::<User>::new().set(TAGS, vec![]).set(TAGS.index::<String>(0), "x");
        assert!(nested.render(&mut b, None).is_err());
    }
}
