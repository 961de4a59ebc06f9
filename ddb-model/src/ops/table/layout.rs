//! The table's layout as `T` declares it (key schema, attribute definitions, global
//! secondary and vector indexes): rendered for `CreateTable`, and compared with what
//! `DescribeTable` reports of an existing table.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, SearchSchemaElement, SearchSchemaElementType, VectorAttributeDefinition,
    VectorDistanceFunction, VectorIndex,
};

use crate::db::Db;
use crate::error::{Error, TableMismatchReason as Why, VectorLayout};
use crate::model::{AttrKind, IndexDef, Metric, Table, VectorIndexDef};

pub(super) fn key_schema(pk: &str, sk: Option<&str>) -> Result<Vec<KeySchemaElement>, Error> {
    let mut schema = vec![element(pk, KeyType::Hash)?];
    if let Some(sk) = sk {
        schema.push(element(sk, KeyType::Range)?);
    }
    Ok(schema)
}

fn element(name: &str, key_type: KeyType) -> Result<KeySchemaElement, Error> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .map_err(Error::build)
}

pub(super) fn attribute(name: &str, kind: AttrKind) -> Result<AttributeDefinition, Error> {
    let kind = match kind {
        AttrKind::S => ScalarAttributeType::S,
        AttrKind::N => ScalarAttributeType::N,
        AttrKind::B => ScalarAttributeType::B,
    };
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .map_err(Error::build)
}

/// The key schema of an index: one attribute per key, or the typed attributes of a
/// multi-attribute key in order (every partition attribute `HASH`, every sort attribute
/// `RANGE`).
pub(super) fn index_schema(index: &IndexDef) -> Result<Vec<KeySchemaElement>, Error> {
    if !index.is_multi() {
        return key_schema(index.pk, index.sk);
    }
    let hash = index.pk_attrs.iter().map(|a| element(a.name, KeyType::Hash));
    hash.chain(index.sk_attrs.iter().map(|a| element(a.name, KeyType::Range))).collect()
}

/// Every attribute the table's keys and indexes are made of, with its type, each once. Two
/// declarations of one attribute with different types (the derive refuses them) keep the
/// first.
pub(super) fn attribute_definitions<T: Table>() -> Vec<(&'static str, AttrKind)> {
    let mut attributes: Vec<(&'static str, AttrKind)> = vec![(T::PK, AttrKind::S)];
    attributes.extend(T::SK.map(|sk| (sk, AttrKind::S)));
    for index in T::INDEXES {
        if index.is_multi() {
            attributes
                .extend(index.pk_attrs.iter().chain(index.sk_attrs).map(|a| (a.name, a.kind)));
        } else {
            attributes.push((index.pk, AttrKind::S));
            attributes.extend(index.sk.map(|sk| (sk, AttrKind::S)));
        }
    }
    // The type attribute partitions the vector indexes that search one entity type; their
    // filter attributes are typed.
    if let Some(type_attr) = T::TYPE_ATTR
        && T::VECTOR_INDEXES.iter().any(|v| v.by_type)
    {
        attributes.push((type_attr, AttrKind::S));
    }
    for index in T::VECTOR_INDEXES {
        attributes.extend(index.filters.iter().map(|a| (a.name, a.kind)));
    }
    let mut seen = Vec::new();
    attributes.retain(|(name, _)| {
        let first = !seen.contains(name);
        seen.push(*name);
        first
    });
    attributes.sort_unstable_by_key(|(name, _)| *name);
    attributes
}

/// The vector index as `CreateTable` takes it: every attribute projected, partitioned by the
/// table's type attribute when `by_type`, and its filter attributes.
pub(super) fn vector_index<T: Table>(index: &VectorIndexDef) -> Result<VectorIndex, Error> {
    let invalid = Error::build;
    let attribute =
        VectorAttributeDefinition::builder().attribute_name(index.attr).build().map_err(invalid)?;
    let mut built = VectorIndex::builder()
        .index_name(index.name)
        .vector_attribute(attribute)
        .dimensions(i64::from(index.dims))
        .distance_function(distance_function(index.metric))
        .projection(Projection::builder().projection_type(ProjectionType::All).build());
    if let (true, Some(type_attr)) = (index.by_type, T::TYPE_ATTR) {
        let hash = SearchSchemaElement::builder()
            .attribute_name(type_attr)
            .search_schema_element_type(SearchSchemaElementType::Hash)
            .build()
            .map_err(invalid)?;
        built = built.search_schema(hash);
    }
    for filter in index.filters {
        let element = SearchSchemaElement::builder()
            .attribute_name(filter.name)
            .search_schema_element_type(SearchSchemaElementType::InlineFilter)
            .build()
            .map_err(invalid)?;
        built = built.search_schema(element);
    }
    built.build().map_err(invalid)
}

fn distance_function(metric: Metric) -> VectorDistanceFunction {
    match metric {
        Metric::Cosine => VectorDistanceFunction::Cosine,
        Metric::Euclidean => VectorDistanceFunction::Euclidean,
        Metric::DotProduct => VectorDistanceFunction::DotProduct,
    }
}

impl<T: Table> Db<T> {
    pub(super) fn check_layout(
        &self,
        table: &aws_sdk_dynamodb::types::TableDescription,
    ) -> Result<(), Error> {
        let mismatch =
            |reason| Error::TableMismatch { table: self.table_name().to_owned(), reason };
        let schema_of = |schema: &[KeySchemaElement]| {
            let mut pk = None;
            let mut sk = None;
            for e in schema {
                match e.key_type() {
                    KeyType::Hash => pk = Some(e.attribute_name().to_owned()),
                    KeyType::Range => sk = Some(e.attribute_name().to_owned()),
                    _ => {}
                }
            }
            (pk, sk)
        };
        // Every key attribute with its role, in order: what a multi-attribute key compares.
        let elements = |schema: &[KeySchemaElement]| -> Vec<(String, bool)> {
            schema
                .iter()
                .map(|e| (e.attribute_name().to_owned(), *e.key_type() == KeyType::Hash))
                .collect()
        };
        // The declared attributes of a key of one partition and one sort attribute.
        let pair = |pk: &str, sk: Option<&str>| -> Vec<(String, bool)> {
            std::iter::once((pk.to_owned(), true))
                .chain(sk.map(|s| (s.to_owned(), false)))
                .collect()
        };
        let (pk, sk) = schema_of(table.key_schema());
        if pk.as_deref() != Some(T::PK) || sk.as_deref() != T::SK {
            let (found, declared) = (elements(table.key_schema()), pair(T::PK, T::SK));
            return Err(mismatch(Why::KeySchema { index: None, found, declared }));
        }
        for index in T::INDEXES {
            let found = table
                .global_secondary_indexes()
                .iter()
                .find(|g| g.index_name() == Some(index.name));
            let Some(found) = found else {
                return Err(mismatch(Why::MissingIndex { index: index.name, vector: false }));
            };
            if index.is_multi() {
                let declared: Vec<(String, bool)> = index
                    .pk_attrs
                    .iter()
                    .map(|a| (a.name.to_owned(), true))
                    .chain(index.sk_attrs.iter().map(|a| (a.name.to_owned(), false)))
                    .collect();
                let present = elements(found.key_schema());
                if present != declared {
                    let (index, found) = (Some(index.name), present);
                    return Err(mismatch(Why::KeySchema { index, found, declared }));
                }
                continue;
            }
            let (ipk, isk) = schema_of(found.key_schema());
            if elements(found.key_schema()).len() > 2
                || ipk.as_deref() != Some(index.pk)
                || isk.as_deref() != index.sk
            {
                let (found, declared) = (elements(found.key_schema()), pair(index.pk, index.sk));
                return Err(mismatch(Why::KeySchema { index: Some(index.name), found, declared }));
            }
        }
        for index in T::VECTOR_INDEXES {
            let found = table.vector_indexes().iter().find(|v| v.index_name() == Some(index.name));
            let Some(found) = found else {
                return Err(mismatch(Why::MissingIndex { index: index.name, vector: true }));
            };
            let present = VectorLayout {
                attribute: found.vector_attribute().map(|a| a.attribute_name().to_owned()),
                dimensions: found.dimensions(),
                metric: found.distance_function().map(|m| m.as_str().to_owned()),
                search_schema: found
                    .search_schema()
                    .iter()
                    .map(|e| {
                        let kind = e.search_schema_element_type().as_str();
                        (e.attribute_name().to_owned(), kind.to_owned())
                    })
                    .collect(),
            };
            let mut schema = match (index.by_type, T::TYPE_ATTR) {
                (true, Some(type_attr)) => vec![(type_attr, "HASH")],
                _ => Vec::new(),
            };
            schema.extend(index.filters.iter().map(|f| (f.name, "INLINE_FILTER")));
            let declared = VectorLayout {
                attribute: Some(index.attr.to_owned()),
                dimensions: Some(i64::from(index.dims)),
                metric: Some(index.metric.as_str().to_owned()),
                search_schema: schema
                    .iter()
                    .map(|(a, k)| ((*a).to_owned(), (*k).to_owned()))
                    .collect(),
            };
            if present != declared {
                let (index, found) = (index.name, present);
                let (found, declared) = (Box::new(found), Box::new(declared));
                return Err(mismatch(Why::VectorIndex { index, found, declared }));
            }
        }
        Ok(())
    }
}
