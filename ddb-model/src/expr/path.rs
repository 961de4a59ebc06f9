//! Typed attribute paths and the values they accept.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

/// The phantom marker of typed paths: entity, value type, access.
type Marker<E, T, A> = PhantomData<fn() -> (E, T, A)>;

/// Marker: an attribute that update expressions may change.
#[derive(Debug, Clone, Copy)]
pub enum Writable {}

/// Marker: an attribute that update expressions may not change (key fields, whose change
/// would leave the stored keys stale, and the version field, which the library manages).
#[derive(Debug, Clone, Copy)]
pub enum ReadOnly {}

/// One step of a document path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// A map key / top-level attribute name.
    Name(Cow<'static, str>),
    /// A list index.
    Index(usize),
}

/// A document path: a top-level attribute, then map keys and list indexes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Path {
    segments: Vec<PathSegment>,
    /// A `None` written here, or in a member of the value, is `NULL`
    /// (`#[entity(none_as_null)]`), not left out.
    nulls: bool,
    /// The attribute's own `None` is `NULL`: a field that is not an `Option` (whose type
    /// serializes a `None` of its own, which serde cannot read back absent).
    whole_null: bool,
}

impl Path {
    /// A top-level attribute.
    pub fn attr(name: impl Into<Cow<'static, str>>) -> Path {
        Path { segments: vec![PathSegment::Name(name.into())], nulls: false, whole_null: false }
    }

    /// True when the members of a value written at this path keep a `None` as `NULL` (the
    /// field is `#[entity(none_as_null)]`, or its table is).
    pub(crate) fn keeps_null(&self) -> bool {
        self.nulls
    }

    /// True when a `None` written at this path is `NULL`, not a `REMOVE`: the field keeps
    /// `NULL`s, is not an `Option`, or the path is a list element (whose removal would move
    /// the elements after it).
    pub(crate) fn writes_null(&self) -> bool {
        self.nulls || self.whole_null || matches!(self.segments.last(), Some(PathSegment::Index(_)))
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// True when one path is a prefix of the other (DynamoDB rejects two update actions on
    /// overlapping paths).
    pub fn overlaps(&self, other: &Path) -> bool {
        self.segments.iter().zip(&other.segments).all(|(a, b)| a == b)
    }

    fn push(mut self, segment: PathSegment) -> Path {
        self.segments.push(segment);
        // A member's `None` is left out like any member's.
        self.whole_null = false;
        self
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                PathSegment::Name(name) if i == 0 => f.write_str(name)?,
                PathSegment::Name(name) => write!(f, ".{name}")?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A typed top-level attribute of entity `E` holding a `T`. The derive generates one per
/// field, as an associated constant named after the field in upper case (`User::EMAIL`).
///
/// `A` is [`Writable`] or [`ReadOnly`]: update actions only accept writable attributes, so
/// changing a key field through an update does not compile.
pub struct Attr<E, T, A = Writable> {
    name: &'static str,
    /// `set(attr, None)` writes `NULL` rather than removing the attribute, and members
    /// inside the values it is set to keep theirs.
    nulls: bool,
    /// The field is not an `Option`: its own `None` is `NULL`.
    whole_null: bool,
    _marker: Marker<E, T, A>,
}

impl<E, T, A> Attr<E, T, A> {
    #[doc(hidden)]
    pub const fn new(name: &'static str) -> Self {
        Attr { name, nulls: false, whole_null: false, _marker: PhantomData }
    }

    /// The attribute with a `None` written as `NULL`: everywhere in its values when `nulls`
    /// (`#[entity(none_as_null)]` or `#[table(none_as_null)]`), the value's own when
    /// `whole` (a field that is not an `Option`).
    #[doc(hidden)]
    pub const fn none_as_null(self, nulls: bool, whole: bool) -> Self {
        Attr { name: self.name, nulls, whole_null: whole, _marker: PhantomData }
    }

    /// The attribute name as stored (after serde renames).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The path of the attribute.
    pub fn path(&self) -> Path {
        Path { nulls: self.nulls, whole_null: self.whole_null, ..Path::attr(self.name) }
    }

    /// A key inside this (map-valued) attribute, holding a `U` (example on
    /// [`entry`](Attr::entry)).
    pub fn at<U>(&self, key: impl Into<Cow<'static, str>>) -> AttrPath<E, U, A> {
        AttrPath::from_path(self.path().push(PathSegment::Name(key.into())))
    }

    /// An element of this (list-valued) attribute, holding a `U`.
    pub fn index<U>(&self, index: usize) -> AttrPath<E, U, A> {
        AttrPath::from_path(self.path().push(PathSegment::Index(index)))
    }

    /// The entry `key` of this map attribute (a `HashMap` or `BTreeMap` with string keys,
    /// or an `Option` of one), typed as the map's values: it can be set, removed and used
    /// in conditions. Removing a key the map lacks changes nothing; like every nested path,
    /// an entry of a map attribute that is absent from the item cannot be written or removed
    /// (DynamoDB rejects the update: give the field a `#[serde(default)]` so that items
    /// written by ddb-model always hold the map).
    ///
    /// ```
    /// # use std::collections::BTreeMap;
    /// # use ddb_model::{Attr, UpdateActions, UpdateVerbs};
    /// # struct User;
    /// let attrs: Attr<User, BTreeMap<String, u32>> = Attr::new("attrs");
    /// let actions = UpdateActions::<User>::new()
    ///     .set(attrs.entry("a"), 1u32)
    ///     .remove(attrs.entry("b"));
    /// assert_eq!(attrs.entry("a").path().to_string(), "attrs.a");
    ///
    /// let address: Attr<User, std::collections::HashMap<String, String>> = Attr::new("address");
    /// assert_eq!(address.at::<String>("city").path().to_string(), "address.city");
    /// ```
    pub fn entry(&self, key: impl Into<Cow<'static, str>>) -> MapEntry<E, T::Value, A>
    where
        T: MapField,
    {
        MapEntry { path: AttrPath::from_path(self.path().push(PathSegment::Name(key.into()))) }
    }
}

/// A map field with string keys: `HashMap<K, V>` or `BTreeMap<K, V>`, or an `Option` of one.
#[diagnostic::on_unimplemented(
    message = "`entry` needs a map attribute, not `{Self}`",
    label = "a `HashMap` or `BTreeMap` field",
    note = "use `at::<T>(name)` for a field of a nested struct"
)]
pub trait MapField {
    /// The type of the map's values.
    type Value;
}

impl<K, V, S> MapField for std::collections::HashMap<K, V, S> {
    type Value = V;
}
impl<K, V> MapField for std::collections::BTreeMap<K, V> {
    type Value = V;
}
impl<M: MapField> MapField for Option<M> {
    type Value = M::Value;
}

/// An entry of a map attribute, holding a `T`: made by [`Attr::entry`] and
/// [`AttrPath::entry`]. Unlike other paths it can be removed whatever `T` is (the map then
/// lacks the key); it can be set and used in conditions like any path.
pub struct MapEntry<E, T, A = Writable> {
    path: AttrPath<E, T, A>,
}

impl<E, T, A> MapEntry<E, T, A> {
    /// The path.
    pub fn path(&self) -> Path {
        self.path.path()
    }

    /// The same entry as a plain nested path (to go deeper with `at` or `index`).
    pub fn as_path(&self) -> &AttrPath<E, T, A> {
        &self.path
    }
}

impl<E, T, A> Clone for MapEntry<E, T, A> {
    fn clone(&self) -> Self {
        MapEntry { path: self.path.clone() }
    }
}

impl<E, T, A> fmt::Debug for MapEntry<E, T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MapEntry({})", self.path.path)
    }
}

impl<E, T> UpdatePath<E, T> for MapEntry<E, T, Writable> {
    fn update_path(&self) -> Path {
        self.path()
    }
}

impl<E, T> RemovePath<E> for MapEntry<E, T, Writable> {
    fn remove_path(&self) -> Path {
        self.path()
    }
}

impl<E, T, A> Clone for Attr<E, T, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, T, A> Copy for Attr<E, T, A> {}

impl<E, T, A> fmt::Debug for Attr<E, T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Attr({})", self.name)
    }
}

/// A typed nested path of entity `E` (a map key or list element inside an attribute) holding
/// a `T`. Made with [`Attr::at`] and [`Attr::index`].
pub struct AttrPath<E, T, A = Writable> {
    path: Path,
    _marker: Marker<E, T, A>,
}

impl<E, T, A> AttrPath<E, T, A> {
    fn from_path(path: Path) -> Self {
        AttrPath { path, _marker: PhantomData }
    }

    /// The path.
    pub fn path(&self) -> Path {
        self.path.clone()
    }

    /// A key inside this (map-valued) path, holding a `U`.
    pub fn at<U>(&self, key: impl Into<Cow<'static, str>>) -> AttrPath<E, U, A> {
        AttrPath::from_path(self.path.clone().push(PathSegment::Name(key.into())))
    }

    /// An element of this (list-valued) path, holding a `U`.
    pub fn index<U>(&self, index: usize) -> AttrPath<E, U, A> {
        AttrPath::from_path(self.path.clone().push(PathSegment::Index(index)))
    }

    /// The entry `key` of this (map-valued) path: see [`Attr::entry`].
    pub fn entry(&self, key: impl Into<Cow<'static, str>>) -> MapEntry<E, T::Value, A>
    where
        T: MapField,
    {
        MapEntry {
            path: AttrPath::from_path(self.path.clone().push(PathSegment::Name(key.into()))),
        }
    }
}

impl<E, T, A> Clone for AttrPath<E, T, A> {
    fn clone(&self) -> Self {
        AttrPath::from_path(self.path.clone())
    }
}

impl<E, T, A> fmt::Debug for AttrPath<E, T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AttrPath({})", self.path)
    }
}

/// A path that update actions may write, holding a `T`: a [`Writable`] [`Attr`] or
/// [`AttrPath`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be changed by an update",
    label = "primary-key fields, the version field and the fields of an index chosen by a `when` method are read-only in updates",
    note = "to change such a field, write the whole item with `replace` (keys are recomputed); the version is bumped by the library"
)]
pub trait UpdatePath<E, T> {
    /// The path.
    fn update_path(&self) -> Path;
}

impl<E, T> UpdatePath<E, T> for Attr<E, T, Writable> {
    fn update_path(&self) -> Path {
        self.path()
    }
}

impl<E, T> UpdatePath<E, T> for AttrPath<E, T, Writable> {
    fn update_path(&self) -> Path {
        self.path()
    }
}

/// The value type of the typed path of an expiry field holding a `T` (`User::EXPIRES` is an
/// `Attr<User, Expiry<SystemTime>>`; see [`ExpiryField`](crate::entity::ExpiryField)): an update or a condition takes a `T` (or a `&T`) and
/// writes or compares the stored seconds. An `Option` field is cleared with `remove`.
pub struct Expiry<T>(PhantomData<fn() -> T>);

/// A path that `remove` accepts: a [`Writable`] attribute or nested path holding an `Option`
/// (removed attributes read back as `None`), or an entry of a map ([`Attr::entry`]).
#[diagnostic::on_unimplemented(
    message = "`remove` needs a writable `Option` attribute, not `{Self}`",
    label = "a removed attribute must read back as `None`, so only `Option` fields can be removed",
    note = "to clear another field, `set` it to a value; to remove a map entry, use `entry(key)`; key fields and the version field are read-only"
)]
pub trait RemovePath<E> {
    /// The path.
    fn remove_path(&self) -> Path;
}

impl<E, T> RemovePath<E> for Attr<E, Option<T>, Writable> {
    fn remove_path(&self) -> Path {
        self.path()
    }
}

impl<E, T> RemovePath<E> for Attr<E, Expiry<Option<T>>, Writable> {
    fn remove_path(&self) -> Path {
        self.path()
    }
}

impl<E, T> RemovePath<E> for AttrPath<E, Option<T>, Writable> {
    fn remove_path(&self) -> Path {
        self.path()
    }
}

/// A value accepted where an attribute of type `T` is compared or written: a `T`, a `&T`,
/// `&str` for strings, and the inner value for `Option` fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a value of an attribute of type `{T}`",
    label = "expected `{T}` (or a reference to it)"
)]
pub trait ValueArg<T> {
    /// The DynamoDB attribute value.
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error>;

    /// The value as a write stores it: `None` for a `None` (which an update removes), and
    /// members holding `None` left out, unless `nulls` (then `NULL` in both places).
    #[doc(hidden)]
    fn to_stored_value(&self, _nulls: bool) -> Result<Option<AttributeValue>, serde_dynamo::Error> {
        self.to_attribute_value().map(Some)
    }
}

fn serialize<V: Serialize + ?Sized>(v: &V) -> Result<AttributeValue, serde_dynamo::Error> {
    crate::item::to_value(v)
}

impl<T: Serialize> ValueArg<T> for T {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        serialize(self)
    }
    fn to_stored_value(&self, nulls: bool) -> Result<Option<AttributeValue>, serde_dynamo::Error> {
        crate::item::to_value_or_none(self, nulls)
    }
}

impl<T: Serialize> ValueArg<T> for &T {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        serialize(*self)
    }
    fn to_stored_value(&self, nulls: bool) -> Result<Option<AttributeValue>, serde_dynamo::Error> {
        crate::item::to_value_or_none(*self, nulls)
    }
}

impl ValueArg<String> for &str {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        Ok(AttributeValue::S((*self).to_owned()))
    }
}

impl ValueArg<Option<String>> for &str {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        Ok(AttributeValue::S((*self).to_owned()))
    }
}

impl<T: Serialize> ValueArg<Vec<T>> for &[T] {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        serialize(*self)
    }
}

macro_rules! option_value_arg {
    ($($t:ty),*) => {$(
        impl ValueArg<Option<$t>> for $t {
            fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
                serialize(self)
            }
        }
    )*};
}
option_value_arg!(
    String, bool, char, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);
