//! The model as a NoSQL Workbench data model (the JSON its data modeler imports and exports:
//! `ModelName`, `ModelMetadata`, `DataModel` with one table, its `KeyAttributes`,
//! `NonKeyAttributes`, one `TableFacets` entry per entity and its `GlobalSecondaryIndexes`).

use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::{Inverse, TableModel, attribute_type};
use crate::model::{IndexDef, KeyAttr};

impl TableModel {
    /// The NoSQL Workbench data model of the table, dated `date` (Workbench writes dates as
    /// `"Nov 27, 2026, 06:30 PM"`; [`workbench_date`] gives the current one). Each entity is a
    /// facet whose key aliases are its key templates and whose attributes are its stored
    /// fields, its entity-type attribute, its index keys and its schema version attribute; an
    /// edge's inverse items are a facet too, and so is the sentinel item of each unique
    /// constraint (`User:unique(email)`, keyed `_unique#User.email#<email>` / `_unique`, with
    /// its type and owner attributes). The expiry field (Time to Live) is an `N` attribute.
    /// Every facet's attributes are among the table's; the indexes project all attributes and
    /// the table is on-demand, as `create_table` makes it. A multi-attribute index is keyed by
    /// its first partition and sort attributes, of their types (the format holds one
    /// attribute per key); the description lists all of them.
    ///
    /// The Workbench format has no place for vector indexes or a Time to Live setting: their
    /// attributes are listed like any other, and the model's description names the Time to
    /// Live attribute and each vector index (attribute, dimensions, metric, filters), but
    /// importing the model does not create them.
    pub fn workbench_json(&self, date: &str) -> String {
        serde_json::to_string_pretty(&self.workbench(date)).unwrap_or_default()
    }

    /// [`workbench_json`](Self::workbench_json) as a JSON value.
    pub fn workbench(&self, date: &str) -> Value {
        let key = |(name, ty): (&str, &str)| json!({ "AttributeName": name, "AttributeType": ty });
        let key_attributes = |pk: (&str, &str), sk: Option<(&str, &str)>| match sk {
            Some(sk) => json!({ "PartitionKey": key(pk), "SortKey": key(sk) }),
            None => json!({ "PartitionKey": key(pk) }),
        };
        // The table's attributes: every entity's, first type wins (entities may share one).
        let mut attributes: Vec<(String, &'static str)> = Vec::new();
        let add = |attributes: &mut Vec<(String, &'static str)>, name: &str, ty: &'static str| {
            if name != self.pk
                && Some(name) != self.sk
                && !attributes.iter().any(|(n, _)| n == name)
            {
                attributes.push((name.to_owned(), ty));
            }
        };
        let mut facets = Vec::new();
        for e in &self.entities {
            // The entity's attributes with their types, in facet order.
            let mut stored: Vec<(&str, &'static str)> = Vec::new();
            stored.extend(self.type_attr.map(|attr| (attr, "S")));
            stored.extend(e.constants.iter().map(|c| (c.attr, "S")));
            let key_attrs = |d: &'static IndexDef| std::iter::once(d.pk).chain(d.sk);
            for index in &e.shape.indexes {
                if let Some(def) = self.indexes.iter().find(|d| d.name == index.index) {
                    stored.extend(key_attrs(def).map(|attr| (attr, "S")));
                }
            }
            let tree_index = e.shape.tree.as_ref().and_then(|t| t.index.as_deref());
            for def in self.indexes.iter().filter(|d| Some(d.name) == tree_index) {
                stored.extend(key_attrs(def).map(|attr| (attr, "S")));
            }
            if e.schema.is_some() {
                stored.push((self.schema_attr, "N"));
            }
            for field in &e.shape.fields {
                // The expiry field is stored as the seconds Time to Live reads.
                let ty = if e.ttl == Some(field.attr.as_str()) {
                    "N"
                } else {
                    attribute_type(&field.rust_type, field.in_key)
                };
                stored.push((&field.attr, ty));
            }
            let mut names: Vec<String> = Vec::new();
            for (name, ty) in stored {
                add(&mut attributes, name, ty);
                names.push(name.to_owned());
            }
            names.dedup();
            facets.push(facet(
                e.name,
                &e.shape.pk,
                e.shape.sk.as_deref().filter(|_| self.sk.is_some()),
                &names,
            ));
            if let Some(Inverse::Items { name, pk, sk }) = e.edge.as_ref().map(|edge| &edge.inverse)
            {
                let names: Vec<String> = names
                    .iter()
                    .filter(|n| {
                        !self.indexes.iter().any(|d| d.pk == *n || d.sk == Some(n.as_str()))
                    })
                    .cloned()
                    .collect();
                facets.push(facet(name, pk, self.sk.map(|_| *sk), &names));
            }
            for u in self.unique_sentinels(e) {
                let owner = &u.owner_attrs[..if self.sk.is_some() { 2 } else { 1 }];
                let names: Vec<String> =
                    self.type_attr.iter().chain(owner).map(|a| (*a).to_owned()).collect();
                for attr in &names {
                    add(&mut attributes, attr, "S");
                }
                let name = format!("{}({})", u.type_name, u.def.field);
                facets.push(facet(&name, &u.sentinel_pk, u.sentinel_sk, &names));
            }
        }
        let indexes: Vec<Value> = self
            .indexes
            .iter()
            .map(|d| {
                // A multi-attribute key as its first attribute, of its type (the format holds
                // one attribute per key; the description lists them all).
                let kind = |attrs: &[KeyAttr]| attrs.first().map_or("S", |a| a.kind.as_str());
                let pk = (d.pk, kind(d.pk_attrs));
                let sk = d.sk.map(|sk| (sk, kind(d.sk_attrs)));
                for (name, ty) in std::iter::once(pk).chain(sk) {
                    add(&mut attributes, name, ty);
                }
                json!({
                    "IndexName": d.name,
                    "KeyAttributes": key_attributes(pk, sk),
                    "Projection": { "ProjectionType": "ALL" },
                })
            })
            .collect();
        let mut description =
            format!("The entities of table `{}`, exported by ddb-model.", self.name);
        if let Some(ttl) = self.ttl {
            let _ = write!(description, " Time to Live on `{ttl}`.");
        }
        let names = |attrs: &[KeyAttr]| attrs.iter().map(|a| a.name).collect::<Vec<_>>().join(", ");
        for d in self.indexes.iter().filter(|d| d.is_multi()) {
            let _ =
                write!(description, " Multi-attribute index {}: pk {}", d.name, names(d.pk_attrs));
            if !d.sk_attrs.is_empty() {
                let _ = write!(description, "; sk {}", names(d.sk_attrs));
            }
            description.push('.');
        }
        for v in self.vector_indexes {
            let vector = self.vector_text(v);
            let _ = write!(description, " Vector index {vector} (not in the Workbench format).");
        }
        let non_key: Vec<Value> = attributes
            .iter()
            .map(|(name, ty)| json!({ "AttributeName": name, "AttributeType": ty }))
            .collect();
        json!({
            "ModelName": self.name,
            "ModelMetadata": {
                "Author": "ddb-model",
                "DateCreated": date,
                "DateLastModified": date,
                "Description": description,
                "AWSService": "Amazon DynamoDB",
                "Version": "3.0",
            },
            "DataModel": [{
                "TableName": self.name,
                "KeyAttributes": key_attributes((self.pk, "S"), self.sk.map(|sk| (sk, "S"))),
                "NonKeyAttributes": non_key,
                "TableFacets": facets,
                "GlobalSecondaryIndexes": indexes,
                "TableData": [],
                "DataAccess": { "MySql": {} },
                "BillingMode": "PAY_PER_REQUEST",
            }],
        })
    }
}

fn facet(name: &str, pk: &str, sk: Option<&str>, attributes: &[String]) -> Value {
    let alias = match sk {
        Some(sk) => json!({ "PartitionKeyAlias": pk, "SortKeyAlias": sk }),
        None => json!({ "PartitionKeyAlias": pk }),
    };
    json!({
        "FacetName": name,
        "KeyAttributeAlias": alias,
        "TableData": [],
        "NonKeyAttributes": attributes,
        "DataAccess": { "MySql": {} },
    })
}

/// The current time as NoSQL Workbench writes dates (`"Nov 27, 2026, 06:30 PM"`, UTC).
pub fn workbench_date() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    date_text(secs)
}

/// `secs` since the epoch as `"Mon DD, YYYY, HH:MM AM"` (UTC).
pub(super) fn date_text(secs: u64) -> String {
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = (secs / 86_400) as i64;
    let (hour, minute) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h12, half) = match hour {
        0 => (12, "AM"),
        1..=11 => (hour, "AM"),
        12 => (12, "PM"),
        _ => (hour - 12, "PM"),
    };
    let name = MONTHS.get((month - 1) as usize).copied().unwrap_or("Jan");
    format!("{name} {day:02}, {year}, {h12:02}:{minute:02} {half}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::date_text(0), "Jan 01, 1970, 12:00 AM");
        assert_eq!(super::date_text(1_795_804_200), "Nov 27, 2026, 06:30 PM");
        assert_eq!(super::date_text(951_782_400 + 43_200), "Feb 29, 2000, 12:00 PM");
    }
}
