//! An entity's declaration as data (key templates as text, index keys, multi-attribute index
//! keys, stored fields, vector fields, tree, and the names of the access methods generated),
//! written by the derive for tools that describe a model (`tooling`).
//!
//! The derive writes it as one string (`Entity::SHAPE`, so the generated code stays one
//! line): length-prefixed texts (`3:abc`), a tag then the record's texts, an empty text for
//! an absent value. [`EntityShape::parse`] reads it back.

/// What `#[derive(Entity)]` declared, as text: the model tooling reads it.
#[doc(hidden)]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityShape {
    /// The partition-key template (`"USER#<id>"`); empty when undeclared.
    pub pk: String,
    /// The sort-key template, if any.
    pub sk: Option<String>,
    /// The entity's keys on the table's indexes.
    pub indexes: Vec<IndexShape>,
    /// The entity's keys on multi-attribute indexes (`#[index(x, pk = [..], sk = [..])]`).
    pub multi_indexes: Vec<MultiIndexShape>,
    /// The stored fields, in declaration order.
    pub fields: Vec<FieldShape>,
    /// The vector fields (`#[vector(index)]`), in declaration order.
    pub vectors: Vec<VectorShape>,
    /// The tree the entity is the node type of (`#[hierarchy]`), if any.
    pub tree: Option<TreeShape>,
    /// The names of the associated functions the derive generated that take a `db`: every
    /// access method (`get`, `put`, `query_gsi1`, `partition_by_status`, `nearest`, `tree`,
    /// ...), in the order generated.
    pub methods: Vec<String>,
}

/// An entity's key on one multi-attribute index: the fields whose attributes make it.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiIndexShape {
    /// The index name.
    pub index: String,
    /// The name of the generated access path (`query = ..`), when not the index's.
    pub query: Option<String>,
    /// The partition key's attributes, in order.
    pub pk: Vec<AttrShape>,
    /// The sort key's attributes, in order (empty: the index has no sort key).
    pub sk: Vec<AttrShape>,
}

/// One attribute of a multi-attribute index key: the field and its stored attribute.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrShape {
    /// The Rust field name (the generated query's parameter and level method).
    pub field: String,
    /// The stored attribute name.
    pub attr: String,
}

/// A vector field: its attribute and the vector index that searches it.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorShape {
    /// The stored attribute name.
    pub attr: String,
    /// The table's vector index (`#[vector(index)]`).
    pub index: String,
}

/// An entity's key on one index (`#[index(..)]`).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexShape {
    /// The index name.
    pub index: String,
    /// The name of the generated access path (`query = ..`), when not the index's.
    pub query: Option<String>,
    /// The partition-key template.
    pub pk: String,
    /// The sort-key template, if the index has a sort key.
    pub sk: Option<String>,
    /// The bool field or method that keeps an item in the index (`when = ..`), if any.
    pub when: Option<String>,
}

/// A stored field: its attribute and its Rust type as written.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldShape {
    /// The stored attribute name (after serde renames).
    pub attr: String,
    /// The Rust type as written (`Option<String>`).
    pub rust_type: String,
    /// True when a key template uses the field.
    pub in_key: bool,
}

/// The tree of a `#[hierarchy]` node type.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    /// `path`, `closure`, `adjacency` or `nested_set`.
    pub strategy: String,
    /// The index the strategy uses, if any.
    pub index: Option<String>,
    /// The field holding the path (path strategy) or the parent (the others).
    pub field: String,
    /// The deepest node the tree accepts.
    pub max_depth: usize,
}

/// Reads `len:text` runs.
struct Texts<'a>(&'a str);

impl<'a> Iterator for Texts<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let (len, rest) = self.0.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let text = rest.get(..len)?;
        self.0 = rest.get(len..)?;
        Some(text)
    }
}

fn opt(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// A count, then that many field / attribute pairs.
fn attrs<'a>(take: &mut impl FnMut() -> Option<&'a str>) -> Option<Vec<AttrShape>> {
    let n: usize = take()?.parse().ok()?;
    (0..n)
        .map(|_| Some(AttrShape { field: take()?.to_owned(), attr: take()?.to_owned() }))
        .collect()
}

impl EntityShape {
    /// Reads the text `#[derive(Entity)]` writes; `None` for an empty or malformed one.
    ///
    /// ```
    /// use ddb_model::__private::EntityShape;
    /// let shape = EntityShape::parse("2:pk9:USER#<id>2:sk7:PROFILE5:field2:id6:String1:1");
    /// let shape = shape.expect("a shape");
    /// assert_eq!((shape.pk.as_str(), shape.sk.as_deref()), ("USER#<id>", Some("PROFILE")));
    /// assert!(shape.fields[0].in_key);
    /// assert_eq!(EntityShape::parse("2:pk9:USER"), None);
    ///
    /// let text = "2:pk1:x5:multi2:by0:1:11:a1:b1:06:vector1:v2:vi7:methods7:get put";
    /// let shape = EntityShape::parse(text).expect("a shape");
    /// assert_eq!((shape.multi_indexes[0].pk[0].attr.as_str(), shape.multi_indexes[0].sk.len()), ("b", 0));
    /// assert_eq!((shape.vectors[0].index.as_str(), shape.methods.len()), ("vi", 2));
    /// ```
    pub fn parse(text: &str) -> Option<EntityShape> {
        let mut texts = Texts(text);
        let mut shape = EntityShape::default();
        while let Some(tag) = texts.next() {
            let mut take = || texts.next();
            match tag {
                "pk" => shape.pk = take()?.to_owned(),
                "sk" => shape.sk = opt(take()?),
                "index" => shape.indexes.push(IndexShape {
                    index: take()?.to_owned(),
                    query: opt(take()?),
                    pk: take()?.to_owned(),
                    sk: opt(take()?),
                    when: opt(take()?),
                }),
                "multi" => shape.multi_indexes.push(MultiIndexShape {
                    index: take()?.to_owned(),
                    query: opt(take()?),
                    pk: attrs(&mut take)?,
                    sk: attrs(&mut take)?,
                }),
                "vector" => shape
                    .vectors
                    .push(VectorShape { attr: take()?.to_owned(), index: take()?.to_owned() }),
                "methods" => {
                    shape.methods = take()?.split_whitespace().map(str::to_owned).collect()
                }
                "field" => shape.fields.push(FieldShape {
                    attr: take()?.to_owned(),
                    rust_type: take()?.to_owned(),
                    in_key: take()? == "1",
                }),
                "tree" => {
                    shape.tree = Some(TreeShape {
                        strategy: take()?.to_owned(),
                        index: opt(take()?),
                        field: take()?.to_owned(),
                        max_depth: take()?.parse().ok()?,
                    })
                }
                _ => return None,
            }
        }
        (!texts.0.is_empty() || shape.pk.is_empty()).then_some(()).map_or(Some(shape), |()| None)
    }
}

/// The literal text of the sort-key template before its first placeholder (all of it when it
/// has none), read from a shape text at compile time: `""` for an empty or malformed one.
pub(crate) const fn sort_key_base(shape: &'static str) -> &'static str {
    let bytes = shape.as_bytes();
    let (mut i, mut read, mut start, mut len) = (0, 0, 0, 0);
    // The texts are the tag `pk`, the pk template, the tag `sk`, the sk template.
    while read < 4 {
        let mut n: usize = 0;
        while i < bytes.len() && bytes[i] != b':' {
            if !bytes[i].is_ascii_digit() || n > bytes.len() {
                return "";
            }
            n = n * 10 + (bytes[i] - b'0') as usize;
            i += 1;
        }
        i += 1;
        if i + n > bytes.len() {
            return "";
        }
        (start, len) = (i, n);
        i += n;
        read += 1;
    }
    let mut end = start;
    while end < start + len && bytes[end] != b'<' {
        end += 1;
    }
    let (_, rest) = shape.split_at(start);
    let (base, _) = rest.split_at(end - start);
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_key_bases() {
        assert_eq!(sort_key_base("2:pk9:USER#<id>2:sk10:ORDER#<id>"), "ORDER#");
        assert_eq!(sort_key_base("2:pk9:USER#<id>2:sk7:PROFILE"), "PROFILE");
        assert_eq!(sort_key_base("2:pk9:USER#<id>2:sk0:"), "");
        assert_eq!(sort_key_base(""), "");
        assert_eq!(sort_key_base("2:pk99:USER"), "");
        assert_eq!(sort_key_base("x:pk"), "");
    }
}
