//! Typed update actions.

use std::fmt;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

use super::check::{MAX_NESTING_LEVELS, check_expression};
use super::path::{Path, PathSegment, RemovePath, UpdatePath, ValueArg};
use super::{ExprBuilder, Invalid, Operand};
use crate::error::Error;
use crate::error::RequestProblem;
use crate::item::MAX_ITEM_BYTES;

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

/// A set field: `HashSet<T>` or `BTreeSet<T>` (or an `Option` of one) stored as a DynamoDB
/// set with `#[serde(default, with = "ddb_model::set")]`. Its elements are strings, numbers or
/// bytes.
#[diagnostic::on_unimplemented(
    message = "`add_to_set` and `delete_from_set` need a set attribute, not `{Self}`",
    label = "a `HashSet` or `BTreeSet` field stored with `#[serde(default, with = \"ddb_model::set\")]`",
    note = "use `add` for numbers, `append` for lists"
)]
pub trait SetField {
    /// The element type.
    type Element;
}

impl<T, S> SetField for std::collections::HashSet<T, S> {
    type Element = T;
}
impl<T> SetField for std::collections::BTreeSet<T> {
    type Element = T;
}
impl<S: SetField> SetField for Option<S> {
    type Element = S::Element;
}

/// The DynamoDB set of `elements` (string, number or binary set, by what the first element
/// is), without exact duplicates; refused when empty or when an element is not a string,
/// number or binary, or not of the first one's type.
fn set_operand<T, V: ValueArg<T>>(path: &Path, elements: impl IntoIterator<Item = V>) -> Operand {
    let invalid =
        |problem| Operand::Invalid(Box::new(Invalid::Request { path: path.to_string(), problem }));
    let mut values = Vec::new();
    for element in elements {
        match element.to_attribute_value() {
            Ok(v) => values.push(v),
            Err(source) => {
                return Operand::Invalid(Box::new(Invalid::Serialize {
                    path: path.to_string(),
                    source,
                }));
            }
        }
    }
    let kind = |v: &AttributeValue| match v {
        AttributeValue::S(_) => Some("S"),
        AttributeValue::N(_) => Some("N"),
        AttributeValue::B(_) => Some("B"),
        _ => None,
    };
    let Some(first) = values.first() else { return invalid(RequestProblem::EmptySet) };
    let Some(expected) = kind(first) else {
        return invalid(RequestProblem::NotASetElement { found: type_name(first) });
    };
    if let Some(other) = values.iter().find(|v| kind(v) != Some(expected)) {
        return invalid(RequestProblem::NotASetElement { found: type_name(other) });
    }
    let set = match expected {
        "S" => AttributeValue::Ss(dedup(values, |v| match v {
            AttributeValue::S(s) => Some(s),
            _ => None,
        })),
        "N" => AttributeValue::Ns(dedup(values, |v| match v {
            AttributeValue::N(n) => Some(n),
            _ => None,
        })),
        _ => AttributeValue::Bs(dedup(values, |v| match v {
            AttributeValue::B(b) => Some(b),
            _ => None,
        })),
    };
    // Numbers equal by value but written differently (`1`, `1.0`) are refused here.
    Operand::checked(path, set)
}

/// The elements `pick` accepts, first occurrences only.
fn dedup<T: PartialEq>(
    values: Vec<AttributeValue>,
    pick: impl Fn(AttributeValue) -> Option<T>,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for v in values.into_iter().filter_map(pick) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The DynamoDB type name of a value, for messages.
fn type_name(v: &AttributeValue) -> &'static str {
    match v {
        AttributeValue::S(_) => "S",
        AttributeValue::N(_) => "N",
        AttributeValue::B(_) => "B",
        AttributeValue::Bool(_) => "BOOL",
        AttributeValue::Null(_) => "NULL",
        AttributeValue::L(_) => "L",
        AttributeValue::M(_) => "M",
        AttributeValue::Ss(_) => "SS",
        AttributeValue::Ns(_) => "NS",
        AttributeValue::Bs(_) => "BS",
        _ => "unknown",
    }
}

#[derive(Debug, Clone, PartialEq)]
enum SetRhs {
    Value(Operand),
    IfNotExists(Operand),
    Append(Operand),
}

/// The changes of one update of entity `E`: `SET`, `REMOVE` and `ADD` actions on typed
/// attribute paths. Key fields and the version field are read-only: changing them does not
/// compile.
///
/// Usually built through the update builder (`User::update(&db, id).set(..)`), which holds
/// one of these.
pub struct UpdateActions<E> {
    set: Vec<(Path, SetRhs)>,
    remove: Vec<Path>,
    add: Vec<(Path, Operand)>,
    /// `ADD path :set` (set elements; idempotent).
    add_set: Vec<(Path, Operand)>,
    /// `DELETE path :set` (idempotent).
    delete_set: Vec<(Path, Operand)>,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Default for UpdateActions<E> {
    fn default() -> Self {
        UpdateActions {
            set: Vec::new(),
            remove: Vec::new(),
            add: Vec::new(),
            add_set: Vec::new(),
            delete_set: Vec::new(),
            _entity: PhantomData,
        }
    }
}

impl<E> Clone for UpdateActions<E> {
    fn clone(&self) -> Self {
        UpdateActions {
            set: self.set.clone(),
            remove: self.remove.clone(),
            add: self.add.clone(),
            add_set: self.add_set.clone(),
            delete_set: self.delete_set.clone(),
            _entity: PhantomData,
        }
    }
}

impl<E> fmt::Debug for UpdateActions<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpdateActions")
            .field("set", &self.set)
            .field("remove", &self.remove)
            .field("add", &self.add)
            .field("add_set", &self.add_set)
            .field("delete_set", &self.delete_set)
            .finish()
    }
}

impl<E> UpdateActions<E> {
    /// No actions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// `SET path = value`.
    pub fn set<T>(mut self, path: impl UpdatePath<E, T>, value: impl ValueArg<T>) -> Self {
        let path = path.update_path();
        let v = Operand::from_arg(&path, &value);
        self.set.push((path, SetRhs::Value(v)));
        self
    }

    /// `SET path = if_not_exists(path, value)`: sets the attribute only when it is absent.
    pub fn set_if_not_exists<T>(
        mut self,
        path: impl UpdatePath<E, T>,
        value: impl ValueArg<T>,
    ) -> Self {
        let path = path.update_path();
        let v = Operand::from_arg(&path, &value);
        self.set.push((path, SetRhs::IfNotExists(v)));
        self
    }

    /// `REMOVE path`, for `Option` attributes (which read back as `None`).
    pub fn remove(mut self, path: impl RemovePath<E>) -> Self {
        self.remove.push(path.remove_path());
        self
    }

    /// `ADD path value`: adds a number (an absent attribute counts as 0).
    ///
    /// Not idempotent, so the update is made safe to send again (a marker attribute, or a
    /// transaction with an idempotency token; see [`Update`](crate::ops::Update)): an SDK
    /// retry after a lost response cannot add twice.
    pub fn add<T: Numeric>(mut self, path: impl UpdatePath<E, T>, value: impl ValueArg<T>) -> Self {
        let path = path.update_path();
        let v = Operand::from_arg(&path, &value);
        self.add.push((path, v));
        self
    }

    /// Appends `items` to a list attribute (an absent list counts as empty).
    ///
    /// Not idempotent, so the update is made safe to send again, like [`add`](Self::add).
    pub fn append<T: Serialize>(
        mut self,
        path: impl UpdatePath<E, Vec<T>>,
        items: impl IntoIterator<Item = T>,
    ) -> Self {
        let path = path.update_path();
        let items: Vec<T> = items.into_iter().collect();
        let v = Operand::serialize(&path, &items);
        self.set.push((path, SetRhs::Append(v)));
        self
    }

    /// `ADD path :elements`: adds elements to a set attribute (see [`crate::set`] for how a
    /// set field is stored). An absent attribute becomes a set of `elements`; elements
    /// already present stay once. String, number and binary sets; the elements must not be
    /// empty ([`RequestProblem::EmptySet`], nothing sent).
    ///
    /// Idempotent by nature (adding an element twice leaves it once), so unlike
    /// [`add`](Self::add) it needs no marker or transaction.
    ///
    /// ```
    /// # use std::collections::HashSet;
    /// # use ddb_model::{Attr, UpdateActions};
    /// # struct User;
    /// # const TAGS: Attr<User, HashSet<String>> = Attr::new("tags");
    /// let actions = UpdateActions::<User>::new().add_to_set(TAGS, ["admin", "ops"]);
    /// # assert!(actions.is_idempotent());
    /// ```
    pub fn add_to_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let v = set_operand(&path, elements);
        self.add_set.push((path, v));
        self
    }

    /// `DELETE path :elements`: removes elements from a set attribute. Elements that are not
    /// in the set and an absent attribute are no error; removing the last element removes
    /// the attribute (a `#[serde(default, with = "ddb_model::set")]` field reads it back as
    /// an empty set). The elements must not be empty ([`RequestProblem::EmptySet`]).
    /// Idempotent.
    pub fn delete_from_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let v = set_operand(&path, elements);
        self.delete_set.push((path, v));
        self
    }

    /// Replaces a whole set attribute by `elements`, stored as a DynamoDB set (`SET path =
    /// :elements`); no elements removes the attribute, which a `#[serde(default, with =
    /// "ddb_model::set")]` field reads back as an empty set. (`set` would write the set as a
    /// list, which is not how such a field is stored.)
    pub fn replace_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        let path = path.update_path();
        let mut elements = elements.into_iter().peekable();
        if elements.peek().is_none() {
            self.remove.push(path);
        } else {
            let v = set_operand(&path, elements);
            self.set.push((path, SetRhs::Value(v)));
        }
        self
    }

    /// Adds the actions of `other`.
    pub fn merge(mut self, other: UpdateActions<E>) -> Self {
        self.set.extend(other.set);
        self.remove.extend(other.remove);
        self.add.extend(other.add);
        self.add_set.extend(other.add_set);
        self.delete_set.extend(other.delete_set);
        self
    }

    /// True when there are no actions.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
            && self.remove.is_empty()
            && self.add.is_empty()
            && self.add_set.is_empty()
            && self.delete_set.is_empty()
    }

    /// True when applying the actions twice has the same effect as once (no `add`, no
    /// `append`; set elements added or deleted are idempotent).
    pub fn is_idempotent(&self) -> bool {
        self.add.is_empty() && !self.set.iter().any(|(_, rhs)| matches!(rhs, SetRhs::Append(_)))
    }

    fn paths(&self) -> impl Iterator<Item = &Path> {
        self.set
            .iter()
            .map(|(p, _)| p)
            .chain(self.remove.iter())
            .chain(self.add.iter().map(|(p, _)| p))
            .chain(self.add_set.iter().map(|(p, _)| p))
            .chain(self.delete_set.iter().map(|(p, _)| p))
    }

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

        let mut set_clauses = Vec::with_capacity(self.set.len() + 1);
        for (path, rhs) in &self.set {
            let p = b.user_path(path)?;
            set_clauses.push(match rhs {
                SetRhs::Value(v) => format!("{p} = {}", b.operand(v)?),
                SetRhs::IfNotExists(v) => format!("{p} = if_not_exists({p}, {})", b.operand(v)?),
                SetRhs::Append(v) => {
                    let empty = b.value(AttributeValue::L(Vec::new()));
                    format!("{p} = list_append(if_not_exists({p}, {empty}), {})", b.operand(v)?)
                }
            });
        }
        if let Some(attr) = version {
            let p = b.name(attr);
            let zero = b.value(AttributeValue::N("0".into()));
            let one = b.value(AttributeValue::N("1".into()));
            set_clauses.push(format!("{p} = if_not_exists({p}, {zero}) + {one}"));
        }

        let mut out = String::new();
        if !set_clauses.is_empty() {
            out.push_str("SET ");
            out.push_str(&set_clauses.join(", "));
        }
        if !self.remove.is_empty() {
            let removed =
                self.remove.iter().map(|p| b.user_path(p)).collect::<Result<Vec<_>, _>>()?;
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str("REMOVE ");
            out.push_str(&removed.join(", "));
        }
        let added: Vec<&(Path, Operand)> = self.add.iter().chain(&self.add_set).collect();
        self.render_sets(b, &mut out, &added)?;
        check_expression("UpdateExpression", &out)?;
        Ok(out)
    }

    /// Appends the `ADD` clause of `added` and the `DELETE` clause of the set deletions.
    fn render_sets(
        &self,
        b: &mut ExprBuilder,
        out: &mut String,
        added: &[&(Path, Operand)],
    ) -> Result<(), Error> {
        let deleted: Vec<&(Path, Operand)> = self.delete_set.iter().collect();
        for (keyword, actions) in [("ADD", added), ("DELETE", &deleted[..])] {
            if actions.is_empty() {
                continue;
            }
            let mut clauses = Vec::with_capacity(actions.len());
            for (path, v) in actions {
                clauses.push(format!("{} {}", b.user_path(path)?, b.operand(v)?));
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(keyword);
            out.push(' ');
            out.push_str(&clauses.join(", "));
        }
        Ok(())
    }

    /// What DynamoDB checks of the values an update writes, whatever the item holds: each
    /// fits in an item where it is written (nesting below its path; the size of one value is
    /// checked when it is converted), and together they fit in one item (the paths do not overlap, so their sizes add up).
    fn check_written(&self) -> Result<(), Error> {
        let mut total = 0usize;
        for (path, rhs) in &self.set {
            let (SetRhs::Value(v) | SetRhs::IfNotExists(v) | SetRhs::Append(v)) = rhs;
            // A value that failed its checks reports them when it is rendered.
            let Some(shape) = v.shape() else { continue };
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
        for (path, v) in &self.add_set {
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
        for (path, rhs) in &self.set {
            if !at(path) {
                continue;
            }
            return match rhs {
                SetRhs::Value(Operand::Value(v, _)) if whole(path) => Touch::Set(v),
                SetRhs::Value(Operand::Invalid(_)) => Touch::Untouched,
                _ => Touch::Computed,
            };
        }
        if let Some(path) = self.remove.iter().find(|p| at(p)) {
            return if whole(path) { Touch::Removed } else { Touch::Computed };
        }
        let computed = self.add.iter().chain(&self.add_set).chain(&self.delete_set);
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
        if !self.add.is_empty() || !self.add_set.is_empty() || !self.delete_set.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(self.set.len() + self.remove.len());
        for (path, rhs) in &self.set {
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
        out.extend(self.remove.iter().map(|p| (p.clone(), None, false)));
        Some(out)
    }

    /// The actions without the `set_if_not_exists` ones (what an upsert changes on an
    /// existing item whatever it holds).
    pub(crate) fn without_if_not_exists(&self) -> UpdateActions<E> {
        UpdateActions {
            set: self
                .set
                .iter()
                .filter(|(_, rhs)| !matches!(rhs, SetRhs::IfNotExists(_)))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// `REMOVE name` for an attribute the library writes (an index key the update takes the
    /// item out of).
    pub(crate) fn remove_raw(mut self, name: &str) -> Self {
        self.remove.push(Path::attr(name.to_owned()));
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
        for (path, rhs) in &self.set {
            let (SetRhs::Value(v) | SetRhs::IfNotExists(v) | SetRhs::Append(v)) = rhs;
            let name = top(path)?;
            if let Some(v) = value(v) {
                out.push((name, v));
            }
        }
        for (path, v) in self.add.iter().chain(&self.add_set) {
            let name = top(path)?;
            if let Some(v) = value(v) {
                out.push((name, v));
            }
        }
        for path in self.remove.iter().chain(self.delete_set.iter().map(|(p, _)| p)) {
            top(path)?;
        }
        Ok(out)
    }

    /// `SET name = value` for an attribute the library writes (the entity type and key fields
    /// of an upsert).
    pub(crate) fn set_raw(mut self, name: &str, value: AttributeValue) -> Self {
        let path = Path::attr(name.to_owned());
        let v = Operand::checked(&path, value);
        self.set.push((path, SetRhs::Value(v)));
        self
    }

    /// `SET name = if_not_exists(name, value)` for an attribute the library writes (the index
    /// keys of an item an upsert creates).
    pub(crate) fn set_raw_if_not_exists(mut self, name: &str, value: AttributeValue) -> Self {
        let path = Path::attr(name.to_owned());
        let v = Operand::checked(&path, value);
        self.set.push((path, SetRhs::IfNotExists(v)));
        self
    }
}

// For the graph layer (`crate::edge`): an inverse edge item keeps only some of the edge's
// fields, so an update of both sides sends it only the actions on those.
impl<E> UpdateActions<E> {
    /// The actions whose path `keep` accepts.
    pub(crate) fn retain_paths(&self, keep: impl Fn(&Path) -> bool) -> UpdateActions<E> {
        UpdateActions {
            set: self.set.iter().filter(|(p, _)| keep(p)).cloned().collect(),
            remove: self.remove.iter().filter(|p| keep(p)).cloned().collect(),
            add: self.add.iter().filter(|(p, _)| keep(p)).cloned().collect(),
            add_set: self.add_set.iter().filter(|(p, _)| keep(p)).cloned().collect(),
            delete_set: self.delete_set.iter().filter(|(p, _)| keep(p)).cloned().collect(),
            _entity: PhantomData,
        }
    }
}

// For the updates that return what they produced (`crate::ops::update`): one `UpdateItem`
// made idempotent by marker attributes that record the values it computed.
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
            removed: self.remove.clone(),
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
        for (path, rhs) in &self.set {
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
                    let empty = b.value(AttributeValue::L(Vec::new()));
                    let rhs =
                        format!("list_append(if_not_exists({p}, {empty}), {})", b.operand(v)?);
                    computed(&mut out, b, path.clone(), p, rhs);
                }
            }
        }
        for (path, v) in &self.add {
            let p = b.path(path);
            let zero = b.value(AttributeValue::N("0".into()));
            let rhs = format!("if_not_exists({p}, {zero}) + {}", b.operand(v)?);
            computed(&mut out, b, path.clone(), p, rhs);
        }
        if let Some(attr) = version {
            let p = b.name(attr);
            let zero = b.value(AttributeValue::N("0".into()));
            let one = b.value(AttributeValue::N("1".into()));
            computed(
                &mut out,
                b,
                Path::attr(attr),
                p.clone(),
                format!("if_not_exists({p}, {zero}) + {one}"),
            );
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
        out.expression = format!("SET {}", clauses.join(", "));
        if !self.remove.is_empty() {
            let removed: Vec<String> = self.remove.iter().map(|p| b.path(p)).collect();
            out.expression.push_str(" REMOVE ");
            out.expression.push_str(&removed.join(", "));
        }
        // Set elements added and deleted are idempotent: sent as they are, not marked. A
        // retry that finds the marker returns them as stored then.
        let added: Vec<&(Path, Operand)> = self.add_set.iter().collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Attr, ReadOnly};

    struct User;
    const EMAIL: Attr<User, String> = Attr::new("email");
    const LOGINS: Attr<User, u64> = Attr::new("logins");
    const TAGS: Attr<User, Vec<String>> = Attr::new("tags");
    const NICK: Attr<User, Option<String>> = Attr::new("nick");
    #[allow(dead_code)]
    const ID: Attr<User, String, ReadOnly> = Attr::new("id");

    #[test]
    fn renders_all_clauses() {
        let u = UpdateActions::<User>::new()
            .set(EMAIL, "a@b")
            .add(LOGINS, 1)
            .append(TAGS, ["x".to_string()])
            .remove(NICK);
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
        let u = UpdateActions::<User>::new()
            .set(EMAIL, "a@b")
            .add(LOGINS, 1)
            .append(TAGS, ["x".to_string()])
            .remove(NICK);
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
