//! The table's layout as `T` declares it (key schema, attribute definitions, global
//! secondary and vector indexes): rendered for `CreateTable`, and compared with what
//! `DescribeTable` reports of an existing table.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, SearchSchemaElement, SearchSchemaElementType, VectorAttributeDefinition,
    VectorDistanceFunction, VectorIndex,
};

use crate::error::Error;
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
